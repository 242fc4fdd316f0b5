from django.db import migrations, models
from django.db.models import Count, Min
from django.db.models.fields.json import KT

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


def store_finished_runs_groups(apps, schema_editor):
    """Each finished run's rows grouped as `scenarios.run_groups.run_groups` groups them (a
    copy, as above), once the counts above are stored."""
    SuiteRun = apps.get_model("scenarios", "SuiteRun")
    for run in SuiteRun.objects.filter(status="finished").only("pk"):
        variants = (
            run.results.exclude(perturbation="")
            .values_list(KT("perturbation_args__operator"), "verdict_counts")
            .annotate(variants=Count("pk"), first=Min("position"))
            .order_by()
        )
        states = run.results.values_list("slot_states").annotate(rows=Count("pk")).order_by()
        run.groups = {
            "verdicts": [[op or "", counts, n, first] for op, counts, n, first in variants],
            "states": [[slot_states or {}, n] for slot_states, n in states],
        }
        run.save(update_fields=["groups"])


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
        migrations.AddField(
            model_name="suiterun",
            name="groups",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.RunPython(backfill_verdict_counts, migrations.RunPython.noop),
        migrations.RunPython(store_finished_runs_groups, migrations.RunPython.noop),
    ]
