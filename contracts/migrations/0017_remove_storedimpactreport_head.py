"""The report's head now lives in `ImpactReportHead` (0016 copied it there)."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("contracts", "0016_impact_report_head_table"),
    ]

    operations = [
        migrations.RemoveField(
            model_name="storedimpactreport",
            name="head",
        ),
    ]
