"""Violations and widenings as the review gates read them (docs/review.md, "Verdicts").

* A **violation** (a perturbation breaks its relation, docs/verdicts.md) blocks submit and
  publish until an owner records a `ViolationJustification` for its cause (operator,
  proposition, cause: the impact report's row, however many scenarios it touches); the
  reviewer reads the justification next to the cause in the impact report.
* A **widening** (an item the version admits that the published version did not) must be
  acknowledged by the reviewer who approves; the approval records what was acknowledged.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction

from contracts import roles
from contracts.documents import compiled_contract
from contracts.models import AuditAction, ContractVersion, ViolationJustification
from contracts.services import NOT_ALLOWED, Actor, audit_record
from publishing.impact import ImpactReport
from publishing.impact.verdicts import proposition_sha256

from .messages import (
    CANNOT_JUSTIFY,
    JUSTIFICATION_REQUIRED,
    NOT_A_VIOLATION,
    UNJUSTIFIED_VIOLATIONS,
    WIDENINGS_NOT_ACKNOWLEDGED,
)
from .selectors import report_for, status_word


def unjustified_violations(report: ImpactReport) -> list[dict[str, Any]]:
    """The causes of violations (the report's rows) no owner has justified."""
    return [v for v in report.causes if v["justification"] is None]


def unjustified_refusal(version: ContractVersion, report: ImpactReport, verb: str) -> str:
    """The refusal naming each cause of violations without a justification, or ""."""
    open_ones = unjustified_violations(report)
    if not open_ones:
        return ""
    return UNJUSTIFIED_VIOLATIONS.format(
        number=version.number,
        verb=verb,
        count=len(open_ones),
        violations="; ".join(v["text"] for v in open_ones),
    )


def acknowledged_widenings(version: ContractVersion, report: ImpactReport) -> list[dict[str, Any]]:
    """The widenings an approval of `version` with `report` acknowledges (all of the
    report's: each must be): what the approval records, and what a signed approval
    statement names."""
    return list(report.widenings)


def check_widenings_acknowledged(
    version: ContractVersion, report: ImpactReport, acknowledged: Iterable[str]
) -> list[dict[str, Any]]:
    """Refuse an approval that leaves a widening unacknowledged, naming each; else the
    widenings to record."""
    missing = [w["id"] for w in report.widenings if w["id"] not in set(acknowledged)]
    if missing:
        raise ValidationError(
            WIDENINGS_NOT_ACKNOWLEDGED.format(number=version.number, items=", ".join(missing))
        )
    return acknowledged_widenings(version, report)


@transaction.atomic
def violation_justify(
    *,
    actor: Actor,
    version: ContractVersion,
    operator: str,
    proposition: str,
    cause: str = "",
    text: str,
) -> ViolationJustification:
    """An owner records why the violations of one cause in the version's impact report are
    acceptable (or replaces their earlier words); only while the version can be edited.
    One justification covers the cause in every scenario and perturbation it touches, as
    long as its proposition stays as it is now (`proposition_sha256`): an edit of it asks
    again, and the same words recorded again confirm them for the edited proposition."""
    locked = ContractVersion.objects.select_for_update(of=("self",)).get(pk=version.pk)
    if not actor.is_authenticated or not actor.has_perm(
        f"contracts.{roles.EDIT}", locked.decision_type
    ):
        raise PermissionDenied(NOT_ALLOWED)
    if not locked.is_editable:
        raise ValidationError(
            CANNOT_JUSTIFY.format(number=locked.number, status=status_word(locked))
        )
    text = (text or "").strip()
    if not text:
        raise ValidationError({"text": JUSTIFICATION_REQUIRED})
    key = [operator, proposition or "", cause or ""]
    # While the report is being computed there is no violation to justify yet.
    report = report_for(locked)
    violations = report.verdicts["violations"] if report is not None else []
    row = next((v for v in violations if v["key"] == key), None)
    if row is None:
        raise ValidationError(
            NOT_A_VIOLATION.format(
                number=locked.number, operator=operator,
                proposition=proposition or "(the variant as a whole)",
                cause=f", {cause}" if cause else "",
            )
        )  # fmt: skip
    justification, _ = ViolationJustification.objects.update_or_create(
        version=locked,
        operator=operator,
        proposition=proposition or "",
        cause=cause or "",
        defaults={
            "text": text,
            "author": actor,
            "proposition_sha256": proposition_sha256(compiled_contract(locked), proposition or ""),
        },
    )
    audit_record(
        actor=actor,
        action=AuditAction.VIOLATION_JUSTIFIED,
        summary=f"Justified a cause of violations of version {locked.number}: {operator}, "
        f"{proposition or '(variant)'}{f', {cause}' if cause else ''} ({row['count']} "
        f"violation(s) in {len(row['scenarios'])} scenario(s)): {text}",
        version=locked,
        changes={"cause": key, "count": row["count"], "scenarios": row["scenarios"], "text": text},
    )
    return justification
