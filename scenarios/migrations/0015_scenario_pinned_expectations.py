"""A scenario's pins on the output's meaning (`scenarios.expectations`): decision_ready,
the blocking set, each slot's `required` flag and its resource ids. Every stored scenario
reads "not checked" for each (null, or an empty mapping)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('scenarios', '0014_suiterun_catalogue'),
    ]

    operations = [
        migrations.AddField(
            model_name='scenario',
            name='expected_blocking',
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='scenario',
            name='expected_decision_ready',
            field=models.BooleanField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='scenario',
            name='expected_required',
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AddField(
            model_name='scenario',
            name='expected_resource_ids',
            field=models.JSONField(blank=True, default=dict),
        ),
    ]
