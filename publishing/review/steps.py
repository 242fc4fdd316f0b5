"""The steps every transition takes, in this order: lock the rows it is about to change,
check the person's permission and the lock version their page showed, then the action's own
rule (`actions.available_actions`); and, when it ends a review, close it."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.utils import timezone

from contracts.models import ContractVersion, DecisionType, Review
from contracts.services import NOT_ALLOWED, STALE_EDIT, Actor, EditConflict

from .actions import ACTIONS, Facts, action


def lock(version: ContractVersion) -> ContractVersion:
    """Lock the decision type's row, then the version's: every transition (and
    `version_start_draft`) takes them in this order, so none can wait on another in a cycle.
    `of=("self",)` keeps the joined rows (the type, the author) unlocked."""
    DecisionType.objects.select_for_update(of=("self",)).get(pk=version.decision_type_id)
    return (
        ContractVersion.objects.select_for_update(of=("self",))
        .select_related("decision_type", "created_by")
        .get(pk=version.pk)
    )


def check_person(
    actor: Actor, version: ContractVersion, name: str, expected_lock_version: int | None = None
) -> Facts:
    """Refuse a person without the action's role (403), then a button whose page showed an
    older lock version: acting on a version that changed since would act on something the
    person has not seen."""
    facts = Facts(actor, version)
    if not facts.has(ACTIONS[name].permission):
        raise PermissionDenied(NOT_ALLOWED)
    if expected_lock_version is not None and version.lock_version != expected_lock_version:
        raise EditConflict(STALE_EDIT)
    return facts


def require_action(facts: Facts, name: str) -> Facts:
    """Refuse, with its reason, an action `available_actions` would not offer; the caller
    holds the locks, so the answer holds until it commits."""
    found = action(facts, name)
    if not found.allowed:
        raise found.refusal()
    return facts


def check(
    actor: Actor, version: ContractVersion, name: str, expected_lock_version: int | None = None
) -> Facts:
    """The person, their page's lock version, then the action's rule."""
    return require_action(check_person(actor, version, name, expected_lock_version), name)


def active_review(version: ContractVersion) -> Review | None:
    return (
        Review.objects.select_for_update().filter(version=version, closed_at__isnull=True).first()
    )


def close_review(
    version: ContractVersion, *, actor: Actor, outcome: str, comment: str = ""
) -> Review | None:
    review = active_review(version)
    if review is not None:
        review.closed_at = timezone.now()
        review.closed_by = actor if actor.is_authenticated else None
        review.outcome = outcome
        if comment:
            review.comment = comment
        review.save(update_fields=["closed_at", "closed_by", "outcome", "comment"])
    return review
