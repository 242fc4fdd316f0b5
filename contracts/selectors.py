"""Reads for the UI, already filtered by what the user may see.

A decision type the user holds no object permission on does not exist for them: list
selectors leave it out and single-object selectors raise the model's `DoesNotExist`, as for
a row that is not there at all. The views answer 404.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth import models as auth
from django.db.models import Prefetch, Q, QuerySet
from guardian.shortcuts import get_objects_for_user

from . import permissions, roles
from .documents import (
    ContractInvalid,
    Problem,
    compiler_json,
    contract_document,
    document_sha256,
    validate_document,
)
from .lint import Finding, lint_document
from .models import (
    EDIT_ACTIONS,
    Approval,
    AuditEvent,
    ContractVersion,
    DecisionType,
    SourceClass,
    SourceClassProposal,
    source_class_changes,
)

# Who reads: anyone, signed in or not (an anonymous person sees nothing).
User = auth.User | auth.AnonymousUser


def decision_types_for_user(*, user: User) -> QuerySet[DecisionType]:
    if not user.is_authenticated:
        return DecisionType.objects.none()
    return get_objects_for_user(
        user, f"contracts.{roles.VIEW}", klass=DecisionType, accept_global_perms=False
    )


def decision_type_for_user(*, user: User, key: str) -> DecisionType:
    try:
        return decision_types_for_user(user=user).get(key=key)
    except DecisionType.DoesNotExist:
        raise DecisionType.DoesNotExist("No such decision type.") from None


def version_for_user(*, user: User, key: str, number: int) -> ContractVersion:
    decision_type = decision_type_for_user(user=user, key=key)
    try:
        return decision_type.versions.select_related("decision_type").get(number=number)
    except ContractVersion.DoesNotExist:
        raise ContractVersion.DoesNotExist("No such version.") from None


def can_edit(*, user: User, decision_type: DecisionType) -> bool:
    return permissions.can_edit(user, decision_type)


def can_review(*, user: User, decision_type: DecisionType) -> bool:
    return permissions.can_review(user, decision_type)


def version_editable(*, user: User, version: ContractVersion) -> bool:
    """The editor shows its forms: the version's rows are editable and so is the person."""
    return version.is_editable and permissions.can_edit(user, version.decision_type)


def can_start_draft(*, user: User, version: ContractVersion) -> bool:
    """A frozen contract changes through a new draft, which needs no open version."""
    decision_type = version.decision_type
    return (
        not version.is_editable
        and permissions.can_edit(user, decision_type)
        and not decision_type.versions.filter(status__in=ContractVersion.OPEN_STATUSES).exists()
    )


def person(*, username: str) -> Any:
    """The account with this username, or None (to grant or revoke a role)."""
    return get_user_model().objects.filter(username=username).first()


def people(*, decision_type: DecisionType) -> list[tuple[Any, roles.Role]]:
    """Who holds which role on the type (granted per person; superusers are not listed)."""
    return roles.people_with_roles(decision_type)


def current_version(*, decision_type: DecisionType) -> ContractVersion | None:
    """The version the editor shows: the open one if there is one, else the latest."""
    versions = decision_type.versions.select_related("decision_type")
    return (
        versions.filter(status__in=ContractVersion.OPEN_STATUSES).first()
        or versions.order_by("-number").first()
    )


@dataclass(frozen=True)
class DashboardRow:
    decision_type: DecisionType
    draft: ContractVersion | None
    in_review: ContractVersion | None
    published: ContractVersion | None
    last_change: AuditEvent | None


def dashboard_rows(*, user: User) -> list[DashboardRow]:
    """Each visible decision type with its draft, in-review and published versions and its
    most recent audit event, in a fixed number of queries."""
    shown = (
        ContractVersion.Status.DRAFT,
        ContractVersion.Status.CHANGES_REQUESTED,
        ContractVersion.Status.IN_REVIEW,
        ContractVersion.Status.APPROVED,
        ContractVersion.Status.PUBLISHED,
    )
    types = list(
        decision_types_for_user(user=user)
        .order_by("key")
        .prefetch_related(
            Prefetch(
                "versions",
                queryset=ContractVersion.objects.filter(status__in=shown),
                to_attr="shown_versions",
            )
        )
    )
    latest: dict[int | None, AuditEvent] = {}
    events = (
        AuditEvent.objects.filter(decision_type__in=[t.pk for t in types])
        .select_related("actor")
        .order_by("decision_type_id", "-created_at", "-id")
    )
    for event in events.only("decision_type_id", "created_at", "summary", "action", "actor"):
        latest.setdefault(event.decision_type_id, event)
    rows = []
    for decision_type in types:
        by_status = {v.status: v for v in decision_type.shown_versions}
        rows.append(
            DashboardRow(
                decision_type=decision_type,
                draft=by_status.get(ContractVersion.Status.DRAFT)
                or by_status.get(ContractVersion.Status.CHANGES_REQUESTED),
                in_review=by_status.get(ContractVersion.Status.IN_REVIEW)
                or by_status.get(ContractVersion.Status.APPROVED),
                published=by_status.get(ContractVersion.Status.PUBLISHED),
                last_change=latest.get(decision_type.pk),
            )
        )
    return rows


def waiting_for_review(*, user: User) -> list[ContractVersion]:
    """Versions in review (or approved, still open to more approvals) on types the user
    reviews, that they neither drafted nor edited and have not approved yet: their to-do list.
    Three queries, however many types."""
    if not user.is_authenticated:
        return []
    reviewed = get_objects_for_user(
        user, f"contracts.{roles.REVIEW}", klass=DecisionType, accept_global_perms=False
    )
    edited = AuditEvent.objects.filter(actor=user, action__in=EDIT_ACTIONS, version__isnull=False)
    approved = Approval.objects.filter(
        reviewer=user, voided_at__isnull=True, review__closed_at__isnull=True
    )
    return list(
        ContractVersion.objects.filter(
            decision_type__in=reviewed,
            status__in=(ContractVersion.Status.IN_REVIEW, ContractVersion.Status.APPROVED),
        )
        .exclude(created_by=user)
        .exclude(pk__in=edited.values("version_id"))
        .exclude(pk__in=approved.values("version_id"))
        .select_related("decision_type", "created_by")
        .order_by("updated_at", "pk")
    )


def source_classes() -> QuerySet[SourceClass]:
    """The catalogue is shared: every signed-in person may read it."""
    return SourceClass.objects.order_by("key")


def source_class_catalogue() -> dict[str, SourceClass]:
    return {c.key: c for c in source_classes()}


def source_class_get(*, key: str) -> SourceClass:
    try:
        return SourceClass.objects.get(key=key)
    except SourceClass.DoesNotExist:
        raise SourceClass.DoesNotExist("No such source class.") from None


def can_manage_catalogue(*, user: User) -> bool:
    return user.is_authenticated and user.has_perm(roles.MANAGE_CATALOGUE)


def can_propose_catalogue_change(*, user: User) -> bool:
    return user.is_authenticated and user.has_perm(roles.PROPOSE_CATALOGUE_CHANGE)


def catalogue_history(*, user: User, limit: int = 20) -> QuerySet[AuditEvent]:
    """The catalogue changes and decisions on proposals `user` may see, newest first.

    A change made without a proposal is public, like the catalogue itself; an event that
    names a proposal (proposed, accepted, rejected) follows the proposal's own page: its
    author and the catalogue managers see it, nobody else (`proposals_visible_to`)."""
    events = AuditEvent.objects.filter(action__startswith="source_class.")
    if not can_manage_catalogue(user=user):
        own = list(proposals_visible_to(user=user).values_list("pk", flat=True))
        events = events.filter(Q(changes__proposal__isnull=True) | Q(changes__proposal__in=own))
    return events.select_related("actor").order_by("-created_at", "-id")[:limit]


def open_proposals() -> QuerySet[SourceClassProposal]:
    return SourceClassProposal.objects.filter(
        status=SourceClassProposal.Status.OPEN
    ).select_related("proposed_by", "source_class")


def proposals_by(*, user: User) -> QuerySet[SourceClassProposal]:
    if not user.is_authenticated:
        return SourceClassProposal.objects.none()
    return SourceClassProposal.objects.filter(proposed_by=user).select_related("decided_by")


def proposals_visible_to(*, user: User) -> QuerySet[SourceClassProposal]:
    """Who may see a proposal, in one place: catalogue managers see every proposal, anyone
    else only their own. The proposal's page and the catalogue history both ask here."""
    proposals = SourceClassProposal.objects.select_related(
        "source_class", "proposed_by", "decided_by"
    )
    if can_manage_catalogue(user=user):
        return proposals
    if not user.is_authenticated:
        return proposals.none()
    return proposals.filter(proposed_by=user)


def proposal_for_user(*, user: User, pk: int) -> SourceClassProposal:
    """The proposal if `user` may see it (`proposals_visible_to`), else `DoesNotExist`."""
    try:
        return proposals_visible_to(user=user).get(pk=pk)
    except SourceClassProposal.DoesNotExist:
        raise SourceClassProposal.DoesNotExist("No such proposal.") from None


@dataclass(frozen=True)
class AffectedVersion:
    """One version whose contract accepts the class, and what the change does to its lint."""

    version: ContractVersion
    propositions: list[str]
    added: list[Finding]
    removed: list[Finding]


@dataclass(frozen=True)
class CatalogueImpact:
    """What a catalogue change would do, before it is saved."""

    key: str
    changes: dict[str, tuple[Any, Any]]
    affected: list[AffectedVersion]
    # Decision types that accept the class but that the person may not see: counted, not named.
    hidden_types: int


# Versions whose contract the catalogue still shapes: the open one (the next to be
# published) and the published one (its lint, and the draft a new version copies).
IMPACT_STATUSES: tuple[str, ...] = (
    *ContractVersion.OPEN_STATUSES,
    ContractVersion.Status.PUBLISHED,
)


def source_class_impact(*, user: User, key: str, after: dict[str, Any]) -> CatalogueImpact:
    """The versions (open or published) whose contract accepts `key`, with the lint findings
    the change adds and removes for each. `after` holds the class's proposed field values."""
    before_catalogue = source_class_catalogue()
    current = before_catalogue.get(key)
    before = current.field_values() if current else {}
    after_catalogue = {**before_catalogue, key: SourceClass(key=key, **after)}
    visible = set(decision_types_for_user(user=user).values_list("pk", flat=True))
    affected, hidden = [], set()
    versions = ContractVersion.objects.filter(status__in=IMPACT_STATUSES).select_related(
        "decision_type"
    )
    for version in versions.order_by("decision_type__key", "number"):
        document = contract_document(version)
        accepting = [
            str(p.get("key"))
            for p in document.get("propositions") or []
            if key in (p.get("accepted_classes") or [])
        ]
        if not accepting:
            continue
        if version.decision_type_id not in visible:
            hidden.add(version.decision_type_id)
            continue
        was = lint_document(document, before_catalogue)
        will_be = lint_document(document, after_catalogue)
        affected.append(
            AffectedVersion(
                version=version,
                propositions=accepting,
                added=[f for f in will_be if f not in was],
                removed=[f for f in was if f not in will_be],
            )
        )
    changes = source_class_changes(before, after)
    return CatalogueImpact(key=key, changes=changes, affected=affected, hidden_types=len(hidden))


def history(*, decision_type: DecisionType, limit: int | None = 50) -> QuerySet[AuditEvent]:
    """The type's audit events, newest first; `limit=None` for all of them (to page through).
    Each row as the history lists it: its time, actor, summary and version number, not its
    changes nor its version's snapshot."""
    return (
        AuditEvent.objects.filter(decision_type=decision_type)
        .select_related("actor", "version")
        .only(
            "pk",
            "created_at",
            "action",
            "summary",
            "decision_type_id",
            "actor__username",
            "version__number",
        )  # fmt: skip
        .order_by("-created_at", "-id")[:limit]
    )


@dataclass(frozen=True)
class Preview:
    """What the compiler would receive for a version, or why it would refuse it."""

    document: dict[str, Any]
    compiler_document: dict[str, Any] | None
    problems: list[Problem]
    sha256: str

    @property
    def valid(self) -> bool:
        return self.compiler_document is not None


def version_preview(*, version: ContractVersion) -> Preview:
    document = contract_document(version)
    try:
        contract = validate_document(document)
    except ContractInvalid as exc:
        return Preview(document=document, compiler_document=None, problems=exc.problems, sha256="")
    compiled = compiler_json(contract)
    return Preview(
        document=document, compiler_document=compiled, problems=[], sha256=document_sha256(compiled)
    )


def version_lint(*, version: ContractVersion) -> list[Finding]:
    return lint_document(contract_document(version), source_class_catalogue())
