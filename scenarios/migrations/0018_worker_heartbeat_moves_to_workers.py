"""`WorkerHeartbeat` belongs to the `workers` app now: removed from this app's state only; the
table and its rows stay, taken over by `workers` 0001 (which renames it in its 0002)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("scenarios", "0017_archived_scenarios_corpora_candidates"),
        ("workers", "0001_worker_heartbeat_from_scenarios"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="WorkerHeartbeat")],
            database_operations=[],
        ),
    ]
