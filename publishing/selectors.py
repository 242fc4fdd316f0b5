"""Reads for the review pages: a version's active review, its approvals and its bundle.

The callers have already checked that the person may see the version
(`contracts.selectors.version_for_user`); these read what belongs to it.
"""

from __future__ import annotations

from contracts.models import Approval, Bundle, ContractVersion, DecisionType, Review


def active_review(*, version: ContractVersion) -> Review | None:
    """The review the version is in, if it is in one (at most one: a database constraint)."""
    return Review.objects.filter(version=version, closed_at__isnull=True).first()


def approvals(*, version: ContractVersion) -> list[Approval]:
    """Every approval of the version, standing or voided, oldest first."""
    return list(
        Approval.objects.filter(version=version).select_related("reviewer").order_by("created_at")
    )


def bundle_of(*, version: ContractVersion) -> Bundle | None:
    """The signed bundle of a published version (None before it is published)."""
    return (
        Bundle.objects.filter(version=version).select_related("publisher", "decision_type").first()
    )


def bundles_by_version(*, decision_type: DecisionType) -> dict[int, Bundle]:
    """The type's bundles, keyed by the id of the version each signs."""
    return {b.version_id: b for b in Bundle.objects.filter(decision_type=decision_type)}
