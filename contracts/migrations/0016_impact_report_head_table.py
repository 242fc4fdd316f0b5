"""Each stored report's head moves to a row of its own (`ImpactReportHead`): in the report's
row, SQLite walked its overflow pages (megabytes at 10,000 scenarios) to read any column
stored after it, the bounded head and the fingerprint a page finds a report by included.
The old column goes in the next migration, a transaction of its own (PostgreSQL alters no
table with foreign-key checks of this one's new rows pending)."""

import django.db.models.deletion
from django.db import migrations, models


def heads_to_their_table(apps, schema_editor):
    reports = apps.get_model("contracts", "StoredImpactReport").objects
    heads = apps.get_model("contracts", "ImpactReportHead").objects
    # One head at a time: each can run to megabytes.
    for pk in reports.filter(head__isnull=False).values_list("pk", flat=True):
        heads.create(report_id=pk, head=reports.values_list("head", flat=True).get(pk=pk))


def heads_back_to_their_reports(apps, schema_editor):
    reports = apps.get_model("contracts", "StoredImpactReport").objects
    heads = apps.get_model("contracts", "ImpactReportHead").objects
    for pk in heads.values_list("pk", flat=True):
        reports.filter(pk=pk).update(head=heads.values_list("head", flat=True).get(pk=pk))


class Migration(migrations.Migration):

    dependencies = [
        ("contracts", "0015_impact_report_inputs_fingerprint"),
    ]

    operations = [
        migrations.CreateModel(
            name="ImpactReportHead",
            fields=[
                (
                    "report",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="stored_head",
                        serialize=False,
                        to="contracts.storedimpactreport",
                    ),
                ),
                ("head", models.JSONField()),
            ],
        ),
        migrations.RunPython(heads_to_their_table, heads_back_to_their_reports),
    ]
