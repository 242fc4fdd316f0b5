from django.db import migrations, models

BATCH = 2000


def count_verdicts(flips):
    """The variant's verdicts counted per proposition and kind, as `scenarios.result_rows.
    verdict_counts` stores them; a copy, so this migration keeps meaning what it meant."""
    counts = {}
    for verdict in (flips or {}).get("verdicts", []):
        kinds = counts.setdefault(verdict["proposition"] or "", {})
        kinds[verdict["kind"]] = kinds.get(verdict["kind"], 0) + 1
    return {key: dict(sorted(counts[key].items())) for key in sorted(counts)} or None


def backfill_verdict_counts(apps, schema_editor):
    """Every stored variant's counts, from its `flips`, in batches (a run has 100,000s)."""
    ScenarioResult = apps.get_model("scenarios", "ScenarioResult")
    rows = ScenarioResult.objects.exclude(perturbation="").filter(flips__isnull=False)
    batch = []
    for row in rows.only("pk", "flips").order_by("pk").iterator(chunk_size=BATCH):
        row.verdict_counts = count_verdicts(row.flips)
        if row.verdict_counts is not None:
            batch.append(row)
        if len(batch) >= BATCH:
            ScenarioResult.objects.bulk_update(batch, ["verdict_counts"])
            batch = []
    if batch:
        ScenarioResult.objects.bulk_update(batch, ["verdict_counts"])


class Migration(migrations.Migration):
    dependencies = [
        ("scenarios", "0008_run_chunks"),
    ]

    operations = [
        migrations.AddField(
            model_name="scenarioresult",
            name="verdict_counts",
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.RunPython(backfill_verdict_counts, migrations.RunPython.noop),
    ]
