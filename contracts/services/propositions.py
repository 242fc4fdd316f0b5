"""A draft's propositions and, for each, its accepted source classes in precedence order."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max

from contracts.models import AuditAction, ContractVersion, Proposition, SourceClass

from .audit import audit_record
from .checks import STALE_EDIT, Actor, EditConflict, _full_clean
from .drafts import _bump, _lock_draft

# Messages tests assert on.
DUPLICATE_PROPOSITION = "This version already has a proposition with this key."
UNKNOWN_CLASS = "'{key}' is not in the source-class catalogue."
RETIRED_CLASS = "'{key}' is retired; no candidate can carry it."
CLASS_ALREADY_ACCEPTED = "'{key}' is already accepted for this proposition."
CLASS_NOT_ACCEPTED = "'{key}' is not accepted for this proposition."
BAD_DIRECTION = "Move 'up' or 'down'."

DIRECTIONS = {"up": -1, "down": 1}


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
