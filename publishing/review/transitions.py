"""The review transitions of a contract version, one action each (publishing, which builds
and signs the bundle, is `publish.py`):

    draft ──submit──▶ in review ──approve──▶ approved ──publish──▶ published ──▶ superseded
      ▲                  │  ▲                   │                     │
      └─ edit/withdraw ──┘  └── more approvals ─┘                     └──retire──▶ retired
      ▲                  │
      └── edit ── changes requested ◀── request changes (from in review or approved)

Each takes the same steps (`steps.py`): lock, check the person, their page's lock version and
the action's rule (`available_actions`), change the state and write one audit event, all in
one transaction. Views, management commands, the demo and the tests call these functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from compiler.statements import SignedStatement
from contracts.documents import compiled_contract, compiler_json, document_sha256
from contracts.models import Approval, AuditAction, ContractVersion, Review
from contracts.services import Actor, approvals_void, audit_record, version_return_to_draft
from publishing.impact import (
    REPORT_FAILED,
    REPORT_PENDING,
    ready_report,
    report_request,
    stored_report,
)

from .actions import APPROVE, REQUEST_CHANGES, RETIRE, SUBMIT, WITHDRAW
from .catalogue import catalogue_sha256
from .justifications import check_widenings_acknowledged
from .messages import COMMENT_REQUIRED, NOT_IN_REVIEW, REPORT_CHANGED
from .selectors import status_word
from .statements import checked_statement
from .steps import active_review, check, close_review, lock

Status = ContractVersion.Status


@transaction.atomic
def version_submit(
    *, actor: Actor, version: ContractVersion, expected_lock_version: int
) -> ContractVersion:
    """The owner sends a draft for review: its contract is validated and frozen."""
    locked = lock(version)
    check(actor, locked, SUBMIT, expected_lock_version)
    contract = compiled_contract(locked)
    before = locked.status
    locked.snapshot = compiler_json(contract)
    locked.sha256 = document_sha256(locked.snapshot)
    locked.status = Status.IN_REVIEW
    # Every form rendered before submission is stale now, so an old editor tab cannot
    # silently pull the version back out of review.
    locked.lock_version += 1
    locked.save(update_fields=["snapshot", "sha256", "status", "lock_version", "updated_at"])
    review = Review.objects.create(
        version=locked,
        submitted_by=actor,
        version_lock=locked.lock_version,
        contract_sha256=locked.sha256,
    )
    audit_record(
        actor=actor,
        action=AuditAction.SUBMITTED,
        summary=f"Submitted version {locked.number} for review",
        version=locked,
        changes={"before": before, "review": review.pk, "sha256": locked.sha256},
    )
    # The impact report is computed in the background, ready by the time a reviewer opens it.
    report_request(version=locked)
    return locked


@transaction.atomic
def version_withdraw(
    *, actor: Actor, version: ContractVersion, expected_lock_version: int | None = None
) -> ContractVersion:
    """The owner takes a version out of review (or back from approved) to edit it."""
    locked = lock(version)
    check(actor, locked, WITHDRAW, expected_lock_version)
    return version_return_to_draft(actor=actor, version=locked, reason="withdrawn by its owner")


@transaction.atomic
def version_approve(
    *,
    actor: Actor,
    version: ContractVersion,
    report_sha256: str,
    signed_statement: SignedStatement | str | dict[str, Any] | None,
    comment: str = "",
    acknowledged_widenings: Sequence[str] = (),
) -> Approval:
    """A reviewer approves exactly the version's current content and the impact report
    they were shown (`report_sha256`); the report stored for the version's inputs now must
    still match it (a report still being computed refuses), and each of its widenings must be
    among `acknowledged_widenings` (their ids). The approval is the statement they signed on
    their side (`approval_statement`, which names those widenings), checked against their
    registered key before it is stored; nothing is signed here."""
    locked = lock(version)
    check(actor, locked, APPROVE)
    review = active_review(locked)
    if review is None:  # pragma: no cover - the status says there is one
        raise ValidationError(
            NOT_IN_REVIEW.format(number=locked.number, status=status_word(locked), verb="approved")
        )
    report = ready_report(locked)
    if report is None:
        stored = stored_report(locked)
        if stored.status == stored.Status.FAILED:  # for good: say why, not "being computed"
            raise ValidationError(REPORT_FAILED.format(number=locked.number, error=stored.error))
        raise ValidationError(REPORT_PENDING.format(number=locked.number))
    if report.sha256 != report_sha256:
        raise ValidationError(REPORT_CHANGED)
    widenings = check_widenings_acknowledged(locked, report, acknowledged_widenings)
    signed = checked_statement(
        actor,
        locked,
        signed_statement,
        {
            "kind": "approval",
            "report_sha256": report.sha256,
            "acknowledged_widenings": tuple(w["id"] for w in widenings),
        },
    )
    approval = Approval.objects.create(
        review=review,
        version=locked,
        reviewer=actor,
        version_lock=locked.lock_version,
        contract_sha256=locked.sha256,
        report_sha256=report.sha256,
        catalogue_sha256=catalogue_sha256(locked),
        report=report.document,
        comment=comment,
        acknowledged_widenings=widenings,
        statement=signed.statement.model_dump(mode="json"),
        signature=signed.signature,
    )
    before = locked.status
    locked.status = Status.APPROVED
    locked.save(update_fields=["status", "updated_at"])
    audit_record(
        actor=actor,
        action=AuditAction.APPROVED,
        summary=f"Approved version {locked.number}" + (f": {comment}" if comment else ""),
        version=locked,
        changes={
            "before": before,
            "approval": approval.pk,
            "report_sha256": report.sha256,
            "sha256": locked.sha256,
            "lock_version": locked.lock_version,
            "acknowledged_widenings": [w["id"] for w in widenings],
            "key_id": signed.statement.key_id,
            "signed_at": signed.statement.signed_at,
        },
    )
    return approval


@transaction.atomic
def version_request_changes(
    *, actor: Actor, version: ContractVersion, comment: str
) -> ContractVersion:
    """A reviewer sends the version back to its owner, saying why; approvals lapse."""
    locked = lock(version)
    check(actor, locked, REQUEST_CHANGES)
    comment = (comment or "").strip()
    if not comment:
        raise ValidationError({"comment": COMMENT_REQUIRED})
    now = timezone.now()
    voided = approvals_void(version=locked, now=now, reason="changes requested")
    close_review(locked, actor=actor, outcome=Review.Outcome.CHANGES_REQUESTED, comment=comment)
    before = locked.status
    locked.status = Status.CHANGES_REQUESTED
    locked.save(update_fields=["status", "updated_at"])
    audit_record(
        actor=actor,
        action=AuditAction.CHANGES_REQUESTED,
        summary=f"Requested changes to version {locked.number}: {comment}",
        version=locked,
        changes={"before": before, "comment": comment, "voided_approvals": voided},
    )
    return locked


@transaction.atomic
def version_retire(
    *,
    actor: Actor,
    version: ContractVersion,
    reason: str = "",
    expected_lock_version: int | None = None,
) -> ContractVersion:
    """Withdraw a published version from use (no published version remains), or abandon
    a version on its way to publication so another draft can start."""
    locked = lock(version)
    check(actor, locked, RETIRE, expected_lock_version)
    before = locked.status
    voided = 0
    if before != Status.PUBLISHED:
        voided = approvals_void(version=locked, now=timezone.now(), reason="version retired")
        close_review(locked, actor=actor, outcome=Review.Outcome.RETIRED)
    locked.status = Status.RETIRED
    locked.save(update_fields=["status", "updated_at"])
    audit_record(
        actor=actor,
        action=AuditAction.RETIRED,
        summary=f"Retired version {locked.number}" + (f": {reason}" if reason else ""),
        version=locked,
        changes={"before": before, "reason": reason, "voided_approvals": voided},
    )
    return locked
