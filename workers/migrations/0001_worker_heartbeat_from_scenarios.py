"""`WorkerHeartbeat` moves here from `scenarios`: added to this app's state on the table
`scenarios` created (its 0006), which keeps its rows; 0002 renames the table."""

from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("scenarios", "0006_worker_heartbeat"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="WorkerHeartbeat",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("worker", models.CharField(max_length=200, unique=True)),
                        ("seen_at", models.DateTimeField(db_index=True)),
                    ],
                    options={"db_table": "scenarios_workerheartbeat"},
                ),
            ],
            database_operations=[],
        ),
    ]
