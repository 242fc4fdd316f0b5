"""The shared source-class catalogue: catalogue managers change it, policy owners propose."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone

from contracts import roles
from contracts.models import AuditAction, SourceClass, SourceClassProposal, source_class_changes

from .audit import audit_record
from .checks import Actor, _full_clean, check_lock

# Messages tests assert on.
STALE_SOURCE_CLASS = (
    "Someone changed this source class after you opened it, so nothing was saved. "
    "The current values are shown below."
)
DUPLICATE_SOURCE_CLASS = "A source class with this key already exists."

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
    check_lock(current, expected_lock_version, STALE_PROPOSAL if proposal else STALE_SOURCE_CLASS)
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
