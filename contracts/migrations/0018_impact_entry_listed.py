"""Each scenario entry of a stored report gets `listed`, what a page's list reads of it (the
entry without its verdicts and each compile's sentence), filled here for the rows stored
before: a page reads a row whose `listed` is null whole, as before."""

from django.db import migrations, models

# As `publishing.impact.entries.listed` made it when this migration was written.
LISTED = ("name", "changed", "summary", "compiles", "problems", "newly_failing", "now_passing")
LISTED_FACTS = {
    "flips": ("perturbation", "proposition", "before", "after"),
    "admitted_changes": ("perturbation", "added", "removed"),
}


def listed(entry):
    shown = {key: entry[key] for key in LISTED if key in entry}
    for key, facts in LISTED_FACTS.items():
        shown[key] = [
            {fact: change[fact] for fact in facts if fact in change}
            for change in entry.get(key, [])
        ]
    return shown


def fill_listed(apps, schema_editor):
    Entry = apps.get_model("contracts", "ImpactScenarioEntry")
    rows = Entry.objects.filter(listed__isnull=True).values_list("pk", "entry")
    batch = []
    for pk, entry in rows.iterator(chunk_size=500):
        batch.append(Entry(pk=pk, listed=listed(entry)))
        if len(batch) == 500:
            Entry.objects.bulk_update(batch, ["listed"])
            batch = []
    Entry.objects.bulk_update(batch, ["listed"])


class Migration(migrations.Migration):
    dependencies = [
        ("contracts", "0017_remove_storedimpactreport_head"),
    ]

    operations = [
        migrations.AddField(
            model_name="impactscenarioentry",
            name="listed",
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.RunPython(fill_listed, migrations.RunPython.noop),
    ]
