"""The result rows' JSON columns lose the `JSON_VALID` check Django gives a JSONField on SQLite
(`scenarios.fields.ResultJSONField`): it made SQLite parse every JSON value a run inserts.

Altering the six fields one by one would rebuild SQLite's table six times, copying every
stored result each time; the fields are altered in the migration state only, and the table is
rebuilt once, from the model as it then is (`_remake_table`, the step SQLite's schema editor
alters a field with). Backwards, the same single rebuild puts the checks back. PostgreSQL has
no such check on jsonb, and nothing is done there.
"""

from django.db import migrations

import scenarios.fields

FIELDS = {
    "expectation_failures": {"blank": True, "default": list},
    "flips": {"blank": True, "null": True},
    "perturbation_args": {"blank": True, "null": True},
    "slot_states": {"default": dict},
    "verdict_counts": {"blank": True, "null": True},
    "verdicts": {"blank": True, "null": True},
}


def rebuild_results_table(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        schema_editor._remake_table(apps.get_model("scenarios", "ScenarioResult"))


class Migration(migrations.Migration):
    dependencies = [
        ("scenarios", "0012_chunk_tallies_and_report_pieces"),
    ]

    operations = [
        # Backwards only: after the fields are back in the state, the table with its checks.
        migrations.RunPython(migrations.RunPython.noop, rebuild_results_table),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="scenarioresult",
                    name=name,
                    field=scenarios.fields.ResultJSONField(**options),
                )
                for name, options in FIELDS.items()
            ]
        ),
        # Forwards: the table as the altered fields make it.
        migrations.RunPython(rebuild_results_table, migrations.RunPython.noop),
    ]
