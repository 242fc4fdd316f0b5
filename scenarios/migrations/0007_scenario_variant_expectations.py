from __future__ import annotations

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("scenarios", "0006_worker_heartbeat")]

    operations = [
        migrations.AddField(
            model_name="scenario",
            name="variant_expectations",
            field=models.JSONField(blank=True, default=list),
        ),
    ]
