"""Every write to the contracts app. Views, management commands and tests call these.

Each service takes keyword-only arguments, checks the actor's permission, locks what it is
about to change, changes it, writes one `AuditEvent` and returns the changed object — all in
one transaction. Problems a person can fix are raised as `ValidationError` (keyed by field
where there is one) with the messages below; a stale edit raises `EditConflict`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils import timezone
from guardian.shortcuts import assign_perm, remove_perm

from compiler.codes import OrderRole

from . import roles
from .documents import (
    ContractInvalid,
    compiler_json,
    document_sha256,
    draft_document,
    validate_document,
)
from .models import (
    Approval,
    AuditAction,
    AuditEvent,
    ContractVersion,
    DecisionType,
    Proposition,
    Review,
    SourceClass,
    SourceClassProposal,
    source_class_changes,
)

Actor = AbstractBaseUser | AnonymousUser

# Messages tests assert on.
STALE_EDIT = (
    "Someone changed this contract after you opened it, so nothing was saved. "
    "The current version is shown below; make your change again if it is still needed."
)
STALE_SOURCE_CLASS = (
    "Someone changed this source class after you opened it, so nothing was saved. "
    "The current values are shown below."
)
NOT_EDITABLE = (
    "Version {number} is {status} and can no longer be edited; start a new draft to change it."
)
NOT_ALLOWED = "You are not allowed to do this."
DUPLICATE_SOURCE_CLASS = "A source class with this key already exists."
DUPLICATE_DECISION_TYPE = "A decision type with this key already exists."
DUPLICATE_PROPOSITION = "This version already has a proposition with this key."
UNKNOWN_CLASS = "'{key}' is not in the source-class catalogue."
RETIRED_CLASS = "'{key}' is retired; no candidate can carry it."
CLASS_ALREADY_ACCEPTED = "'{key}' is already accepted for this proposition."
CLASS_NOT_ACCEPTED = "'{key}' is not accepted for this proposition."
BAD_DIRECTION = "Move 'up' or 'down'."
BAD_ROLE_ORDER = "List each of {roles} exactly once."
OPEN_VERSION_EXISTS = "Version {number} is still {status}; finish it before starting another."
NO_ROLE = "{username} has no role on this decision type."
LAST_OWNER = "A decision type needs an owner: make someone else owner first."

DIRECTIONS = {"up": -1, "down": 1}


class EditConflict(Exception):
    """The edit was based on a revision that is no longer current; nothing was changed."""

    def __init__(self, message: str = STALE_EDIT) -> None:
        super().__init__(message)
        self.message = message


# --------------------------------------------------------------------------- helpers


def _require(actor: Actor, perm: str, obj: Any = None) -> None:
    if not actor.is_authenticated or not actor.has_perm(perm, obj):
        raise PermissionDenied(NOT_ALLOWED)


def audit_record(
    *,
    actor: Actor | None,
    action: AuditAction,
    summary: str,
    decision_type: DecisionType | None = None,
    version: ContractVersion | None = None,
    changes: dict[str, Any] | None = None,
) -> AuditEvent:
    return AuditEvent.objects.create(
        actor=actor if actor is not None and actor.is_authenticated else None,
        action=action,
        summary=summary[:300],
        decision_type=decision_type
        if decision_type is not None
        else getattr(version, "decision_type", None),
        version=version,
        changes=changes or {},
    )


def _full_clean(instance: Any, *, exclude: Iterable[str] = ()) -> None:
    # Uniqueness is checked by the services themselves, with their own messages.
    instance.full_clean(exclude=list(exclude), validate_unique=False, validate_constraints=False)


# A version on its way to publication (submitted, approved, or sent back) returns to draft
# when its owner edits it: the four-eyes rule voids every approval given so far.
REOPENABLE_STATUSES = frozenset(
    {
        ContractVersion.Status.IN_REVIEW,
        ContractVersion.Status.APPROVED,
        ContractVersion.Status.CHANGES_REQUESTED,
    }
)


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
    if not locked.is_editable and locked.status not in REOPENABLE_STATUSES:
        raise ValidationError(
            NOT_EDITABLE.format(number=locked.number, status=locked.get_status_display().lower())
        )
    if locked.lock_version != expected_lock_version:
        raise EditConflict(STALE_EDIT)
    if locked.status != ContractVersion.Status.DRAFT:
        _return_to_draft(actor=actor, version=locked, reason="edited")
    return locked


def _return_to_draft(*, actor: Actor, version: ContractVersion, reason: str) -> ContractVersion:
    """Send a locked, open version back to draft: close its active review (outcome
    `returned_to_draft`) and void its standing approvals. The caller holds the row lock."""
    before = version.status
    now = timezone.now()
    voided = _void_approvals(version, now=now, reason=f"version {reason}")
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


def _void_approvals(version: ContractVersion, *, now: Any, reason: str) -> int:
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


def _renumber(version: ContractVersion, ordered: Sequence[Proposition]) -> None:
    for position, proposition in enumerate(ordered):
        if proposition.position != position:
            proposition.position = position
            proposition.save(update_fields=["position"])


def _proposition_state(proposition: Proposition) -> dict[str, Any]:
    return {
        "key": proposition.key,
        "description": proposition.description,
        "accepted_classes": list(proposition.accepted_classes),
        "required": proposition.required,
        "max_items": proposition.max_items,
    }


def _check_acceptable(class_keys: Iterable[str]) -> list[str]:
    keys = list(class_keys)
    known = {c.key: c for c in SourceClass.objects.filter(key__in=keys)}
    for key in keys:
        if key not in known:
            raise ValidationError({"accepted_classes": UNKNOWN_CLASS.format(key=key)})
        if known[key].retired:
            raise ValidationError({"accepted_classes": RETIRED_CLASS.format(key=key)})
    if len(set(keys)) != len(keys):
        twice = next(k for i, k in enumerate(keys) if k in keys[:i])
        raise ValidationError({"accepted_classes": CLASS_ALREADY_ACCEPTED.format(key=twice)})
    return keys


def _locked_proposition(
    *, actor: Actor, proposition: Proposition, expected_lock_version: int
) -> tuple[ContractVersion, Proposition]:
    version = _lock_draft(
        actor=actor, version=proposition.version, expected_lock_version=expected_lock_version
    )
    try:
        current = Proposition.objects.select_for_update().get(pk=proposition.pk, version=version)
    except Proposition.DoesNotExist:
        # Deleted by someone else since the form was rendered.
        raise EditConflict(STALE_EDIT) from None
    return version, current


# --------------------------------------------------------------------------- source classes


CATALOGUE_MANAGERS_ONLY = (
    "Only catalogue managers can create, change or retire source classes: the catalogue is "
    "shared by every decision type. Policy owners can propose a change instead."
)
PROPOSERS_ONLY = "Only policy owners can propose a catalogue change."
NO_CATALOGUE_CHANGE = "Nothing to save: these are the source class's current values."
PROPOSAL_DECIDED = "This proposal was already {status}; it cannot be decided again."
STALE_PROPOSAL = (
    "The source class changed after you opened this proposal, so nothing was saved. "
    "Check what the proposal would change now."
)
REJECTION_NEEDS_NOTE = "Say why the proposal is rejected: the proposer reads it."


def _require_catalogue_manager(actor: Actor) -> None:
    if not actor.is_authenticated or not actor.has_perm(roles.MANAGE_CATALOGUE):
        raise PermissionDenied(CATALOGUE_MANAGERS_ONLY)


@transaction.atomic
def source_class_create(
    *,
    actor: Actor,
    key: str,
    label: str,
    description: str = "",
    authority_tier: int = SourceClass.AuthorityTier.CONTROLLED_DOCUMENT,
    weak: bool = False,
    retired: bool = False,
    proposal: SourceClassProposal | None = None,
) -> SourceClass:
    """Add a class to the shared catalogue (catalogue managers only)."""
    _require_catalogue_manager(actor)
    source_class = SourceClass(
        key=key,
        label=label,
        description=description,
        authority_tier=authority_tier,
        weak=weak,
        retired=retired,
    )
    _full_clean(source_class)
    if SourceClass.objects.filter(key=key).exists():
        raise ValidationError({"key": DUPLICATE_SOURCE_CLASS})
    source_class.save()
    after = source_class.field_values()
    audit_record(
        actor=actor,
        action=AuditAction.SOURCE_CLASS_PROPOSAL_ACCEPTED
        if proposal
        else AuditAction.SOURCE_CLASS_CREATED,
        summary=f"Created source class '{key}'"
        + (f" (proposal {proposal.pk} by {proposal.proposed_by})" if proposal else ""),
        changes={"key": key, "before": {}, "after": after}
        | ({"proposal": proposal.pk} if proposal else {}),
    )
    return source_class


@transaction.atomic
def source_class_update(
    *,
    actor: Actor,
    source_class: SourceClass,
    expected_lock_version: int,
    label: str,
    description: str,
    authority_tier: int,
    weak: bool,
    retired: bool,
    proposal: SourceClassProposal | None = None,
) -> SourceClass:
    """Change everything but the key (versions refer to classes by key); catalogue managers
    only. The audit event holds the before and after values of the fields that changed."""
    _require_catalogue_manager(actor)
    current = SourceClass.objects.select_for_update().get(pk=source_class.pk)
    if current.lock_version != expected_lock_version:
        raise EditConflict(STALE_PROPOSAL if proposal else STALE_SOURCE_CLASS)
    before = current.field_values()
    current.label, current.description = label, description
    current.authority_tier, current.weak, current.retired = authority_tier, weak, retired
    _full_clean(current)
    changed = source_class_changes(before, current.field_values())
    if not changed:
        raise ValidationError(NO_CATALOGUE_CHANGE)
    current.lock_version += 1
    current.save()
    verb = "Retired" if changed.get("retired") == (False, True) else "Updated"
    audit_record(
        actor=actor,
        action=AuditAction.SOURCE_CLASS_PROPOSAL_ACCEPTED
        if proposal
        else AuditAction.SOURCE_CLASS_UPDATED,
        summary=f"{verb} source class '{current.key}': {', '.join(changed)}"
        + (f" (proposal {proposal.pk} by {proposal.proposed_by})" if proposal else ""),
        changes={
            "key": current.key,
            "before": {field: old for field, (old, _new) in changed.items()},
            "after": {field: new for field, (_old, new) in changed.items()},
        }
        | ({"proposal": proposal.pk} if proposal else {}),
    )
    return current


@transaction.atomic
def source_class_propose(
    *,
    actor: Actor,
    source_class: SourceClass | None,
    key: str = "",
    label: str,
    description: str = "",
    authority_tier: int = SourceClass.AuthorityTier.CONTROLLED_DOCUMENT,
    weak: bool = False,
    retired: bool = False,
    reason: str = "",
) -> SourceClassProposal:
    """Propose the values a class should have (or a new class, when `source_class` is None);
    a catalogue manager accepts or rejects it. Nothing in the catalogue changes yet."""
    if not actor.is_authenticated or not actor.has_perm(roles.PROPOSE_CATALOGUE_CHANGE):
        raise PermissionDenied(PROPOSERS_ONLY)
    proposal = SourceClassProposal(
        source_class=source_class,
        key=source_class.key if source_class is not None else key,
        label=label,
        description=description,
        authority_tier=authority_tier,
        weak=weak,
        retired=retired,
        reason=reason,
        proposed_by=actor,
    )
    _full_clean(proposal, exclude=["proposed_by", "decided_by"])
    if source_class is None and SourceClass.objects.filter(key=proposal.key).exists():
        raise ValidationError({"key": DUPLICATE_SOURCE_CLASS})
    before = source_class.field_values() if source_class is not None else {}
    changed = source_class_changes(before, proposal.field_values())
    if not changed:
        raise ValidationError(NO_CATALOGUE_CHANGE)
    proposal.proposed_fields = list(changed)
    proposal.save()
    audit_record(
        actor=actor,
        action=AuditAction.SOURCE_CLASS_PROPOSED,
        summary=f"Proposed a change to source class '{proposal.key}': {', '.join(changed)}",
        changes={
            "key": proposal.key,
            "proposal": proposal.pk,
            "before": {field: old for field, (old, _new) in changed.items()},
            "after": {field: new for field, (_old, new) in changed.items()},
        },
    )
    return proposal


def _lock_open_proposal(proposal: SourceClassProposal) -> SourceClassProposal:
    locked = (
        # Only the proposal's row: PostgreSQL cannot lock the nullable side of the class join.
        SourceClassProposal.objects.select_for_update(of=("self",))
        .select_related("source_class", "proposed_by")
        .get(pk=proposal.pk)
    )
    if not locked.is_open:
        raise ValidationError(PROPOSAL_DECIDED.format(status=locked.get_status_display().lower()))
    return locked


@transaction.atomic
def source_class_proposal_accept(
    *,
    actor: Actor,
    proposal: SourceClassProposal,
    expected_lock_version: int | None,
    note: str = "",
) -> SourceClassProposal:
    """Apply a proposal to the catalogue (catalogue managers only), in one transaction with
    the proposal's decision and one audit event holding the before and after values.

    `expected_lock_version` is the class's lock version the manager saw the impact of (None
    for a proposed new class): if the class changed since, nothing is saved."""
    _require_catalogue_manager(actor)
    locked = _lock_open_proposal(proposal)
    if locked.source_class is None:
        source_class_create(actor=actor, key=locked.key, proposal=locked, **locked.applied_to({}))
    else:
        source_class_update(
            actor=actor,
            source_class=locked.source_class,
            expected_lock_version=-1 if expected_lock_version is None else expected_lock_version,
            proposal=locked,
            **locked.applied_to(locked.source_class.field_values()),
        )
    return _decide(locked, actor=actor, status=SourceClassProposal.Status.ACCEPTED, note=note)


@transaction.atomic
def source_class_proposal_reject(
    *, actor: Actor, proposal: SourceClassProposal, note: str
) -> SourceClassProposal:
    """Refuse a proposal with a reason the proposer reads (catalogue managers only)."""
    _require_catalogue_manager(actor)
    locked = _lock_open_proposal(proposal)
    if not note.strip():
        raise ValidationError({"note": REJECTION_NEEDS_NOTE})
    decided = _decide(locked, actor=actor, status=SourceClassProposal.Status.REJECTED, note=note)
    audit_record(
        actor=actor,
        action=AuditAction.SOURCE_CLASS_PROPOSAL_REJECTED,
        summary=f"Rejected proposal {locked.pk} for source class '{locked.key}' "
        f"by {locked.proposed_by}",
        changes={
            "key": locked.key,
            "proposal": locked.pk,
            "before": {"status": SourceClassProposal.Status.OPEN},
            "after": {"status": decided.status, "note": note},
        },
    )
    return decided


def _decide(
    proposal: SourceClassProposal, *, actor: Actor, status: str, note: str
) -> SourceClassProposal:
    proposal.status, proposal.note = status, note.strip()
    proposal.decided_by, proposal.decided_at = actor, timezone.now()
    proposal.save(update_fields=["status", "note", "decided_by", "decided_at"])
    return proposal


# --------------------------------------------------------------------------- decision types


@transaction.atomic
def decision_type_create(
    *,
    actor: Actor,
    key: str,
    title: str,
    description: str = "",
    purposes: Sequence[str] = (),
) -> DecisionType:
    """Create the type with an empty version 1 draft; the creator becomes its owner."""
    _require(actor, "contracts.add_decisiontype")
    decision_type = DecisionType(key=key, title=title, description=description, created_by=actor)
    _full_clean(decision_type, exclude=["created_by"])
    if DecisionType.objects.filter(key=key).exists():
        raise ValidationError({"key": DUPLICATE_DECISION_TYPE})
    decision_type.save()
    for perm in roles.ROLE_PERMISSIONS[roles.Role.OWNER]:
        assign_perm(perm, actor, decision_type)
    audit_record(
        actor=actor,
        action=AuditAction.DECISION_TYPE_CREATED,
        summary=f"Created decision type '{key}'",
        decision_type=decision_type,
        changes={"after": {"key": key, "title": title, "description": description}},
    )
    version = ContractVersion(
        decision_type=decision_type, number=1, purposes=list(purposes), created_by=actor
    )
    version.save()
    _bump(version)
    audit_record(
        actor=actor,
        action=AuditAction.VERSION_CREATED,
        summary="Started draft version 1",
        version=version,
    )
    return decision_type


@transaction.atomic
def access_grant(
    *, actor: Actor, decision_type: DecisionType, user: AbstractBaseUser, role: roles.Role
) -> DecisionType:
    """Make `user` owner, reviewer or viewer of one decision type, replacing any earlier role.

    Its owners (and superusers) may grant; the last owner cannot demote themselves.
    """
    _require(actor, f"contracts.{roles.EDIT}", decision_type)
    role = roles.Role(role)
    DecisionType.objects.select_for_update().get(pk=decision_type.pk)
    before = roles.role_of(user, decision_type)
    if before == roles.Role.OWNER and role != roles.Role.OWNER:
        _keep_an_owner(decision_type, leaving=user)
    _clear_roles(user, decision_type)
    for perm in roles.ROLE_PERMISSIONS[role]:
        assign_perm(perm, user, decision_type)
    audit_record(
        actor=actor,
        action=AuditAction.ACCESS_GRANTED,
        summary=f"Made {user.get_username()} {role} of '{decision_type.key}'",
        decision_type=decision_type,
        changes={
            "user": user.get_username(),
            "before": str(before) if before else None,
            "role": str(role),
        },
    )
    return decision_type


@transaction.atomic
def access_revoke(
    *, actor: Actor, decision_type: DecisionType, user: AbstractBaseUser
) -> DecisionType:
    """Take every role on one decision type away from `user`."""
    _require(actor, f"contracts.{roles.EDIT}", decision_type)
    DecisionType.objects.select_for_update().get(pk=decision_type.pk)
    before = roles.role_of(user, decision_type)
    if before is None:
        raise ValidationError({"username": NO_ROLE.format(username=user.get_username())})
    if before == roles.Role.OWNER:
        _keep_an_owner(decision_type, leaving=user)
    _clear_roles(user, decision_type)
    audit_record(
        actor=actor,
        action=AuditAction.ACCESS_REVOKED,
        summary=f"Removed {user.get_username()} ({before}) from '{decision_type.key}'",
        decision_type=decision_type,
        changes={"user": user.get_username(), "before": str(before)},
    )
    return decision_type


def _clear_roles(user: AbstractBaseUser, decision_type: DecisionType) -> None:
    for perm in (roles.VIEW, roles.EDIT, roles.REVIEW):
        remove_perm(perm, user, decision_type)


def _keep_an_owner(decision_type: DecisionType, *, leaving: AbstractBaseUser) -> None:
    owners = [u for u, role in roles.people_with_roles(decision_type) if role == roles.Role.OWNER]
    if [u.pk for u in owners] == [leaving.pk]:
        raise ValidationError({"username": LAST_OWNER})


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
        for field in (
            "purposes",
            "policy_name",
            "policy_version",
            "min_relevance",
            "mandatory_form",
            "role_order",
            "on_overrun",
        ):
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
    fields = ("purposes", "policy_name", "policy_version", "min_relevance", "role_order")
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


# --------------------------------------------------------------------------- propositions


@transaction.atomic
def proposition_add(
    *,
    actor: Actor,
    version: ContractVersion,
    expected_lock_version: int,
    key: str,
    description: str = "",
    accepted_classes: Sequence[str] = (),
    required: bool = True,
    max_items: int = 1,
) -> Proposition:
    version = _lock_draft(actor=actor, version=version, expected_lock_version=expected_lock_version)
    proposition = Proposition(
        version=version,
        key=key,
        description=description,
        accepted_classes=_check_acceptable(accepted_classes),
        required=required,
        max_items=max_items,
        position=(version.propositions.aggregate(p=Max("position"))["p"] or 0) + 1,
    )
    _full_clean(proposition, exclude=["version"])
    if version.propositions.filter(key=key).exists():
        raise ValidationError({"key": DUPLICATE_PROPOSITION})
    proposition.save()
    _renumber(version, list(version.propositions.all()))
    _bump(version)
    audit_record(
        actor=actor,
        action=AuditAction.PROPOSITION_ADDED,
        summary=f"Added proposition '{key}'",
        version=version,
        changes={"after": _proposition_state(proposition)},
    )
    return proposition


@transaction.atomic
def proposition_update(
    *,
    actor: Actor,
    proposition: Proposition,
    expected_lock_version: int,
    key: str,
    description: str,
    required: bool,
    max_items: int,
) -> Proposition:
    version, current = _locked_proposition(
        actor=actor, proposition=proposition, expected_lock_version=expected_lock_version
    )
    before = _proposition_state(current)
    current.key, current.description = key, description
    current.required, current.max_items = required, max_items
    _full_clean(current, exclude=["version"])
    if version.propositions.filter(key=key).exclude(pk=current.pk).exists():
        raise ValidationError({"key": DUPLICATE_PROPOSITION})
    current.save()
    _bump(version)
    audit_record(
        actor=actor,
        action=AuditAction.PROPOSITION_UPDATED,
        summary=f"Updated proposition '{key}'"
        + (f" (was '{before['key']}')" if before["key"] != key else ""),
        version=version,
        changes={"before": before, "after": _proposition_state(current)},
    )
    return current


@transaction.atomic
def proposition_delete(
    *, actor: Actor, proposition: Proposition, expected_lock_version: int
) -> ContractVersion:
    version, current = _locked_proposition(
        actor=actor, proposition=proposition, expected_lock_version=expected_lock_version
    )
    before = _proposition_state(current)
    current.delete()
    _renumber(version, list(version.propositions.all()))
    _bump(version)
    audit_record(
        actor=actor,
        action=AuditAction.PROPOSITION_DELETED,
        summary=f"Deleted proposition '{before['key']}'",
        version=version,
        changes={"before": before},
    )
    return version


@transaction.atomic
def proposition_move(
    *, actor: Actor, proposition: Proposition, expected_lock_version: int, direction: str
) -> Proposition:
    """Move a proposition one place up or down; the planner visits required ones in this order."""
    if direction not in DIRECTIONS:
        raise ValidationError({"direction": BAD_DIRECTION})
    version, current = _locked_proposition(
        actor=actor, proposition=proposition, expected_lock_version=expected_lock_version
    )
    ordered = list(version.propositions.all())
    index = next(i for i, p in enumerate(ordered) if p.pk == current.pk)
    target = index + DIRECTIONS[direction]
    if 0 <= target < len(ordered):
        ordered[index], ordered[target] = ordered[target], ordered[index]
        _renumber(version, ordered)
    _bump(version)
    audit_record(
        actor=actor,
        action=AuditAction.PROPOSITION_MOVED,
        summary=f"Moved proposition '{current.key}' {direction}",
        version=version,
        changes={"order": [p.key for p in ordered]},
    )
    current.refresh_from_db()
    return current


# --------------------------------------------------------------------------- accepted classes


def _set_accepted(
    *,
    actor: Actor,
    version: ContractVersion,
    proposition: Proposition,
    classes: list[str],
    action: AuditAction,
    summary: str,
) -> Proposition:
    before = list(proposition.accepted_classes)
    proposition.accepted_classes = classes
    proposition.save(update_fields=["accepted_classes"])
    _bump(version)
    audit_record(
        actor=actor,
        action=action,
        summary=summary,
        version=version,
        changes={"proposition": proposition.key, "before": before, "after": classes},
    )
    return proposition


@transaction.atomic
def accepted_class_add(
    *, actor: Actor, proposition: Proposition, expected_lock_version: int, class_key: str
) -> Proposition:
    """Accept one more class, with the lowest precedence."""
    version, current = _locked_proposition(
        actor=actor, proposition=proposition, expected_lock_version=expected_lock_version
    )
    if class_key in current.accepted_classes:
        raise ValidationError({"class_key": CLASS_ALREADY_ACCEPTED.format(key=class_key)})
    try:
        _check_acceptable([class_key])
    except ValidationError as exc:
        raise ValidationError({"class_key": exc.message_dict["accepted_classes"]}) from None
    return _set_accepted(
        actor=actor,
        version=version,
        proposition=current,
        classes=[*current.accepted_classes, class_key],
        action=AuditAction.CLASS_ACCEPTED,
        summary=f"'{current.key}' now accepts '{class_key}'",
    )


@transaction.atomic
def accepted_class_move(
    *,
    actor: Actor,
    proposition: Proposition,
    expected_lock_version: int,
    class_key: str,
    direction: str,
) -> Proposition:
    """Raise or lower one accepted class's precedence by one place."""
    if direction not in DIRECTIONS:
        raise ValidationError({"direction": BAD_DIRECTION})
    version, current = _locked_proposition(
        actor=actor, proposition=proposition, expected_lock_version=expected_lock_version
    )
    classes = list(current.accepted_classes)
    if class_key not in classes:
        raise ValidationError({"class_key": CLASS_NOT_ACCEPTED.format(key=class_key)})
    index = classes.index(class_key)
    target = index + DIRECTIONS[direction]
    if 0 <= target < len(classes):
        classes[index], classes[target] = classes[target], classes[index]
    return _set_accepted(
        actor=actor,
        version=version,
        proposition=current,
        classes=classes,
        action=AuditAction.CLASS_MOVED,
        summary=f"'{current.key}' precedence is now {', '.join(classes)}",
    )


@transaction.atomic
def accepted_class_remove(
    *, actor: Actor, proposition: Proposition, expected_lock_version: int, class_key: str
) -> Proposition:
    version, current = _locked_proposition(
        actor=actor, proposition=proposition, expected_lock_version=expected_lock_version
    )
    if class_key not in current.accepted_classes:
        raise ValidationError({"class_key": CLASS_NOT_ACCEPTED.format(key=class_key)})
    return _set_accepted(
        actor=actor,
        version=version,
        proposition=current,
        classes=[c for c in current.accepted_classes if c != class_key],
        action=AuditAction.CLASS_REMOVED,
        summary=f"'{current.key}' no longer accepts '{class_key}'",
    )
