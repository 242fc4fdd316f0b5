"""What the transitions and the pages read about a version on its way to publication: who
drafted or edited it, which approvals still count, the status to show, the warnings a
reviewer reads and the impact report."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from contracts import lint, roles, selectors
from contracts.models import (
    EDIT_ACTIONS,
    Approval,
    AuditEvent,
    Bundle,
    ContractVersion,
    DecisionType,
    Review,
)
from publishing.impact import REPORT_PENDING, ImpactReport, ready_report
from scenarios.models import Scenario

from .catalogue import catalogue_sha256
from .messages import (
    APPROVAL_OUT_OF_DATE,
    APPROVERS_NO_LONGER_REVIEW,
    CATALOGUE_CHANGED_SINCE_APPROVAL,
    NO_SCENARIO,
    NO_STANDING_APPROVAL,
    REPORT_CHANGED_SINCE_APPROVAL,
)

Status = ContractVersion.Status


def status_word(version: ContractVersion) -> str:
    """The version's status as a sentence names it ("in review")."""
    return version.get_status_display().lower()


def authors(version: ContractVersion) -> set[int]:
    """Who drafted or edited the version: its creator and every actor of an edit event."""
    editors = set(
        AuditEvent.objects.filter(version=version, action__in=EDIT_ACTIONS, actor__isnull=False)
        .values_list("actor_id", flat=True)
        .distinct()
    )
    return editors | {version.created_by_id}


def reviews(user: Any, decision_type: Any) -> bool:
    """Whether the person reviews the type now (what the key set scopes `approve` to)."""
    return bool(user.is_active and user.has_perm(f"contracts.{roles.REVIEW}", decision_type))


def standing_approvals(version: ContractVersion) -> list[Approval]:
    """Approvals of the version's current content, given in its active (or publishing) review."""
    return list(
        Approval.objects.standing()
        .filter(
            version=version,
            version_lock=version.lock_version,
            contract_sha256=version.sha256,
        )
        .select_related("reviewer", "review")
        .order_by("reviewer__username")
    )


def counting_approvals(version: ContractVersion) -> tuple[list[Approval], str]:
    """The approvals a publish would count now, or (none and) why none counts: only approvals
    of the current content, by a non-author, of the report as it is now (it is memoised, so
    stored by the hash of its inputs, so nothing is compiled here) and of the catalogue
    entries as they are now. While the report is being computed, none counts."""
    approvals = standing_approvals(version)
    author_ids = authors(version)
    approvals = [a for a in approvals if a.reviewer_id not in author_ids]
    if not approvals:
        return [], NO_STANDING_APPROVAL.format(number=version.number)
    # A bundle carries only approvals whose keys the key set lets approve this type.
    reviewing = [a for a in approvals if reviews(a.reviewer, version.decision_type)]
    if not reviewing:
        people = ", ".join(a.reviewer.get_username() for a in approvals)
        return [], APPROVERS_NO_LONGER_REVIEW.format(
            number=version.number, key=version.decision_type.key, people=people
        )
    approvals = reviewing
    # The approvers sign the scenarios and expectations the bundle's test suite holds.
    report = report_for(version)
    if report is None:
        return [], REPORT_PENDING.format(number=version.number)
    report_sha256 = report.sha256
    approvals = [a for a in approvals if a.report_sha256 == report_sha256]
    if not approvals:
        return [], REPORT_CHANGED_SINCE_APPROVAL.format(number=version.number)
    catalogue = catalogue_sha256(version)
    approvals = [a for a in approvals if a.catalogue_sha256 == catalogue]
    if not approvals:
        return [], CATALOGUE_CHANGED_SINCE_APPROVAL.format(number=version.number)
    return approvals, ""


def shown_status(version: ContractVersion) -> tuple[str, str]:
    """The status to show: the one Publish would act on. An approved version none of whose
    approvals counts any more (a scenario or the catalogue moved on) is not shown approved."""
    if version.status == Status.APPROVED and counting_approvals(version)[1]:
        return Status.IN_REVIEW.value, APPROVAL_OUT_OF_DATE
    return version.status, version.get_status_display()


def review_warnings(version: ContractVersion) -> list[str]:
    """What a reviewer should know before deciding but that does not block: lint warnings,
    and a contract no scenario exercises."""
    found = [f.message for f in lint.warnings(version_lint(version))]
    if not Scenario.objects.live().filter(decision_type_id=version.decision_type_id).exists():
        found.append(NO_SCENARIO)
    return found


def version_lint(version: ContractVersion) -> list[lint.Finding]:
    return selectors.version_lint(version=version)


def report_for(version: ContractVersion) -> ImpactReport | None:
    """The impact report as a reviewer sees it (a selector, re-exported for views): the one
    stored for the version's current inputs, or None while the worker computes it (asked
    for here if nobody has yet). No request compiles the suite."""
    return ready_report(version)


def open_review(version: ContractVersion) -> Review | None:
    """The version's active review, if any (read, not locked)."""
    return Review.objects.filter(version=version, closed_at__isnull=True).first()


def version_approvals(version: ContractVersion) -> list[Approval]:
    """Every approval of the version, voided ones too, oldest first."""
    return list(
        Approval.objects.filter(version=version).select_related("reviewer").order_by("created_at")
    )


def version_bundle(version: ContractVersion) -> Bundle | None:
    """The version's stored bundle, if it was published (or imported)."""
    return (
        Bundle.objects.filter(version=version)
        .select_related("publisher", "decision_type", "parent")
        .first()
    )


def bundles_by_version(
    decision_type: DecisionType, version_ids: Iterable[int] | None = None
) -> dict[int, Bundle]:
    """The decision type's bundles (of `version_ids` only, when given) by version id, without
    their content: a list names a bundle, it does not carry it."""
    bundles = Bundle.objects.filter(decision_type=decision_type).defer("content")
    if version_ids is not None:
        bundles = bundles.filter(version_id__in=list(version_ids))
    return {b.version_id: b for b in bundles}
