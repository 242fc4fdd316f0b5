"""A version's draft: the lock every edit takes, starting a draft, its settings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from compiler.codes import OrderRole
from contracts import roles
from contracts.documents import (
    ContractInvalid,
    compiler_json,
    document_sha256,
    draft_document,
    validate_document,
)
from contracts.models import (
    Approval,
    AuditAction,
    ContractVersion,
    DecisionType,
    Proposition,
    Review,
)

from .audit import audit_record
from .checks import Actor, _full_clean, _require, check_lock

# Messages tests assert on.
NOT_EDITABLE = (
    "Version {number} is {status} and can no longer be edited; start a new draft to change it."
)
BAD_ROLE_ORDER = "List each of {roles} exactly once."
OPEN_VERSION_EXISTS = "Version {number} is still {status}; finish it before starting another."


def _lock_draft(
    *, actor: Actor, version: ContractVersion, expected_lock_version: int
) -> ContractVersion:
    """Check first, then lock: permission, editable state and the optimistic-lock counter.

    A version in review, approved or sent back is returned to draft first (its review
    closed, its approvals voided, one audit event); a published, superseded or retired
    version is refused."""
    locked = (
        ContractVersion.objects.select_for_update(of=("self",))
        .select_related("decision_type")
        .get(pk=version.pk)
    )
    _require(actor, f"contracts.{roles.EDIT}", locked.decision_type)
    if not locked.accepts_edits:
        raise ValidationError(
            NOT_EDITABLE.format(number=locked.number, status=locked.get_status_display().lower())
        )
    check_lock(locked, expected_lock_version)
    if locked.status != ContractVersion.Status.DRAFT:
        version_return_to_draft(actor=actor, version=locked, reason="edited")
    return locked


def version_return_to_draft(
    *, actor: Actor, version: ContractVersion, reason: str
) -> ContractVersion:
    """Send a locked, open version back to draft: close its active review (outcome
    `returned_to_draft`), void its standing approvals and record one audit event saying
    `reason`. The caller holds the row lock (an edit, a withdrawal)."""
    before = version.status
    now = timezone.now()
    voided = approvals_void(version=version, now=now, reason=f"version {reason}")
    Review.objects.filter(version=version, closed_at__isnull=True).update(
        closed_at=now,
        closed_by=actor if actor.is_authenticated else None,
        outcome=Review.Outcome.RETURNED_TO_DRAFT,
    )
    version.status = ContractVersion.Status.DRAFT
    version.save(update_fields=["status", "updated_at"])
    audit_record(
        actor=actor,
        action=AuditAction.RETURNED_TO_DRAFT,
        summary=f"Version {version.number} returned to draft ({reason})"
        + (f"; {voided} approval(s) voided" if voided else ""),
        version=version,
        changes={"before": before, "after": version.status, "voided_approvals": voided},
    )
    return version


def approvals_void(*, version: ContractVersion, now: Any, reason: str) -> int:
    """Void the version's standing approvals as of `now`, saying why (an approval is for the
    version as it was seen; an edit, a request for changes or a retirement ends it). The
    number voided; the caller holds the version's row lock and records the audit event."""
    return (
        Approval.objects.standing()
        .filter(version=version)
        .update(voided_at=now, void_reason=reason[:200])
    )


def _bump(version: ContractVersion) -> ContractVersion:
    """Move the lock counter and refresh the snapshot (cleared while the rows are invalid)."""
    version.lock_version += 1
    try:
        contract = validate_document(draft_document(version))
    except ContractInvalid:
        version.snapshot, version.sha256 = None, ""
    else:
        version.snapshot = compiler_json(contract)
        version.sha256 = document_sha256(version.snapshot)
    version.save(update_fields=["lock_version", "snapshot", "sha256", "updated_at"])
    return version


@transaction.atomic
def version_start_draft(*, actor: Actor, decision_type: DecisionType) -> ContractVersion:
    """Start the next draft (the way to change a frozen contract) from the published version,
    else the latest: a draft abandoned (retired) since must not carry its changes along."""
    _require(actor, f"contracts.{roles.EDIT}", decision_type)
    DecisionType.objects.select_for_update().get(pk=decision_type.pk)
    open_version = decision_type.versions.filter(status__in=ContractVersion.OPEN_STATUSES).first()
    if open_version is not None:
        raise ValidationError(
            OPEN_VERSION_EXISTS.format(
                number=open_version.number, status=open_version.get_status_display().lower()
            )
        )
    parent = (
        decision_type.versions.filter(status=ContractVersion.Status.PUBLISHED).first()
        or decision_type.versions.order_by("-number").first()
    )
    number = (decision_type.versions.aggregate(n=Max("number"))["n"] or 0) + 1
    version = ContractVersion(decision_type=decision_type, number=number, created_by=actor)
    if parent is not None:
        version.parent = parent
        for field in ContractVersion.COPIED_FIELDS:
            setattr(version, field, getattr(parent, field))
    version.save()
    if parent is not None:
        Proposition.objects.bulk_create(
            Proposition(
                version=version,
                position=p.position,
                key=p.key,
                description=p.description,
                accepted_classes=list(p.accepted_classes),
                required=p.required,
                max_items=p.max_items,
            )
            for p in parent.propositions.all()
        )
    _bump(version)
    audit_record(
        actor=actor,
        action=AuditAction.VERSION_CREATED,
        summary=f"Started draft version {number}"
        + (f" from version {parent.number}" if parent else ""),
        version=version,
        changes={"parent": parent.number if parent else None},
    )
    return version


# --------------------------------------------------------------------------- a draft's settings


@transaction.atomic
def version_update_settings(
    *,
    actor: Actor,
    version: ContractVersion,
    expected_lock_version: int,
    purposes: Sequence[str],
    policy_name: str,
    policy_version: int,
    min_relevance: float,
    role_order: Sequence[str],
) -> ContractVersion:
    """Change the permitted purposes and the assembly policy of a draft."""
    version = _lock_draft(actor=actor, version=version, expected_lock_version=expected_lock_version)
    if sorted(role_order) != sorted(str(r) for r in OrderRole):
        raise ValidationError(
            {"role_order": BAD_ROLE_ORDER.format(roles=", ".join(str(r) for r in OrderRole))}
        )
    fields = ContractVersion.SETTINGS_FIELDS
    before = {f: getattr(version, f) for f in fields}
    version.purposes = list(dict.fromkeys(purposes))
    version.policy_name, version.policy_version = policy_name, policy_version
    version.min_relevance, version.role_order = min_relevance, list(role_order)
    _full_clean(version, exclude=["created_by", "decision_type", "parent"])
    version.save(update_fields=[*fields, "updated_at"])
    _bump(version)
    after = {f: getattr(version, f) for f in fields}
    changed = sorted(f for f in fields if before[f] != after[f])
    audit_record(
        actor=actor,
        action=AuditAction.SETTINGS_UPDATED,
        summary="Changed " + (", ".join(f.replace("_", " ") for f in changed) or "nothing"),
        version=version,
        changes={"before": before, "after": after},
    )
    return version
