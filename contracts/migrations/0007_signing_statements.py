"""Signatures made on the person's side: keys get an origin (existing ones, generated and
held by the workbench, become `legacy`) and a revocation date; approvals keep the statement
their reviewer signed."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("contracts", "0006_approval_acknowledged_widenings"),
    ]

    operations = [
        migrations.AddField(
            model_name="signingkey",
            name="origin",
            field=models.CharField(
                choices=[
                    ("browser", "Browser (WebCrypto)"),
                    ("cli", "Key file (evidence-compiler keygen)"),
                    ("legacy", "Legacy (held by the workbench)"),
                ],
                default="legacy",
                max_length=10,
            ),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="signingkey",
            name="revoked_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name="signingkey",
            name="private_key_encrypted",
            field=models.TextField(blank=True, default=""),
        ),
        migrations.AddField(
            model_name="approval",
            name="statement",
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="approval",
            name="signature",
            field=models.CharField(blank=True, max_length=100),
        ),
    ]
