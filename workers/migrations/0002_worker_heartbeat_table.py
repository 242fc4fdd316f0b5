"""The heartbeat table takes this app's name (rows kept: a rename)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("workers", "0001_worker_heartbeat_from_scenarios"),
        # The model has left `scenarios`' state before its table changes name.
        ("scenarios", "0018_worker_heartbeat_moves_to_workers"),
    ]

    operations = [
        migrations.AlterModelTable(name="workerheartbeat", table=None),
    ]
