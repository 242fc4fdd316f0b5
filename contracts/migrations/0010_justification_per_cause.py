"""One justification per cause of violations, not per (scenario, perturbation, proposition).

A cause is (operator, proposition, cause): what violations are about with no item and no
scenario in it (`compiler._relations.verdicts.Verdict.cause`: the weak classes admitted by a promotion,
joined by "+", the class of a contradiction that does not surface; "" for the others). Each
existing justification is mapped to the cause of the violation it justified:

* read from that violation's message in the version's stored impact report (the reports
  written before this migration hold every violation with its key and message);
* else from the perturbation's name as the suite writes it (`operator(args)`, a list's items
  joined by "+"): `promote_weak(a+b)` gives `a`, `b` and `a+b` (whichever were admitted);
  `contradict(proposition, class)` the class and "", `contradict(proposition)` and
  `contradict_first` the proposition's first accepted class in that version and "" (a
  contradiction that does not surface, or a required slot that does not block); any other
  operator "".

Several justifications of one cause (the same violation in several scenarios) become one,
keeping every distinct text (oldest first, separated by a blank line), the latest author and
the earliest date: nothing an owner wrote is dropped. Backwards, each cause becomes one
justification with no scenario and the perturbation `operator(cause)`: the text survives,
though it no longer matches a violation of the old kind.
"""

import re

from django.db import migrations, models

WEAK_CLASSES = re.compile(r"\(([^()]+)\) claiming approval")
NOT_SURFACING = re.compile(r"although an admissible (.+) of higher precedence contradicts it")
CONTRADICTIONS = {"contradict", "contradict_first"}


def _parsed(perturbation):
    operator, _, rest = perturbation.partition("(")
    arguments = rest[:-1].split(", ") if rest.endswith(")") else []
    return operator, arguments


def _from_message(operator, message):
    if operator == "promote_weak":
        found = WEAK_CLASSES.search(message)
        return "+".join(sorted(found.group(1).split(", "))) if found else None
    if operator in CONTRADICTIONS:
        found = NOT_SURFACING.search(message)
        return found.group(1) if found else ""
    return ""


def _from_name(apps, justification, operator, arguments):
    if operator == "promote_weak" and arguments:
        classes = sorted(set(arguments[0].split("+")))
        return classes + (["+".join(classes)] if len(classes) > 1 else [])
    if operator == "contradict" and len(arguments) >= 2:
        return [arguments[-1], ""]
    if operator in CONTRADICTIONS:
        Proposition = apps.get_model("contracts", "Proposition")
        proposition = Proposition.objects.filter(
            version_id=justification.version_id, key=justification.proposition
        ).first()
        classes = list(proposition.accepted_classes) if proposition is not None else []
        return classes[:1] + [""]
    return [""]


def _messages(apps):
    """(version id, scenario, perturbation, proposition) -> the violation's message, from
    every stored report."""
    StoredImpactReport = apps.get_model("contracts", "StoredImpactReport")
    messages = {}
    for version_id, document in StoredImpactReport.objects.exclude(
        document__isnull=True
    ).values_list("version_id", "document"):
        for violation in ((document or {}).get("verdicts") or {}).get("violations") or []:
            key = violation.get("key")
            if isinstance(key, list) and len(key) == 3 and "message" in violation:
                messages[(version_id, *key)] = violation["message"]
    return messages


def _causes(apps, justification, messages):
    operator, arguments = _parsed(justification.perturbation)
    message = messages.get(
        (justification.version_id, justification.scenario, justification.perturbation,
         justification.proposition)
    )  # fmt: skip
    cause = _from_message(operator, message) if message is not None else None
    if cause is not None:
        return operator, [cause]
    return operator, _from_name(apps, justification, operator, arguments)


def to_causes(apps, schema_editor):
    Justification = apps.get_model("contracts", "ViolationJustification")
    messages = _messages(apps)
    merged = {}
    for old in Justification.objects.order_by("created_at", "pk"):
        operator, causes = _causes(apps, old, messages)
        for cause in causes:
            merged.setdefault((old.version_id, operator, old.proposition, cause), []).append(old)
    Justification.objects.all().delete()
    for (version_id, operator, proposition, cause), olds in merged.items():
        texts = list(dict.fromkeys(o.text for o in olds))
        new = Justification.objects.create(
            version_id=version_id,
            operator=operator,
            proposition=proposition,
            cause=cause,
            text="\n\n".join(texts),
            author_id=olds[-1].author_id,
            scenario="",
            perturbation="",
        )
        Justification.objects.filter(pk=new.pk).update(created_at=olds[0].created_at)
    _checked_now(schema_editor)


def _checked_now(schema_editor):
    """PostgreSQL checks the rows' foreign keys at commit; the columns are altered next in
    the same transaction, which it refuses while those checks are pending."""
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")


def to_violations(apps, schema_editor):
    Justification = apps.get_model("contracts", "ViolationJustification")
    for row in Justification.objects.all():
        row.scenario = ""
        row.perturbation = f"{row.operator}({row.cause})" if row.cause else row.operator
        row.save(update_fields=["scenario", "perturbation"])
    _checked_now(schema_editor)


class Migration(migrations.Migration):
    dependencies = [
        ("contracts", "0009_stored_impact_report_heartbeat"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="violationjustification",
            name="justification_once_per_violation",
        ),
        migrations.AddField(
            model_name="violationjustification",
            name="operator",
            field=models.CharField(default="", max_length=64),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="violationjustification",
            name="cause",
            field=models.CharField(blank=True, default="", max_length=1000),
            preserve_default=False,
        ),
        migrations.AlterField(
            model_name="violationjustification",
            name="scenario",
            field=models.CharField(blank=True, max_length=160),
        ),
        migrations.AlterField(
            model_name="violationjustification",
            name="perturbation",
            field=models.CharField(blank=True, max_length=300),
        ),
        migrations.RunPython(to_causes, to_violations),
        migrations.RemoveField(
            model_name="violationjustification",
            name="scenario",
        ),
        migrations.RemoveField(
            model_name="violationjustification",
            name="perturbation",
        ),
        migrations.AlterModelOptions(
            name="violationjustification",
            options={"ordering": ["operator", "proposition", "cause"]},
        ),
        migrations.AddConstraint(
            model_name="violationjustification",
            constraint=models.UniqueConstraint(
                fields=("version", "operator", "proposition", "cause"),
                name="justification_once_per_cause",
            ),
        ),
    ]
