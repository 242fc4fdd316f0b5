"""What every write of this app shares: the permission checks, the optimistic-lock check and
the located message of a nested field."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied

from contracts import roles
from contracts.models import DecisionType
from contracts.services import Actor, EditConflict
from scenarios.models import CorpusCandidate, Scenario

NOT_ALLOWED = "You are not allowed to do this."


def can_edit(actor: Actor, decision_type: DecisionType) -> bool:
    return actor.is_authenticated and actor.has_perm(f"contracts.{roles.EDIT}", decision_type)


def can_run(actor: Actor, decision_type: DecisionType) -> bool:
    return can_edit(actor, decision_type) or (
        actor.is_authenticated and actor.has_perm(f"contracts.{roles.REVIEW}", decision_type)
    )


def _require_edit(actor: Actor, decision_type: DecisionType) -> None:
    if not can_edit(actor, decision_type):
        raise PermissionDenied(NOT_ALLOWED)


def _check_lock(row: Scenario | CorpusCandidate, expected: int | None, message: str) -> None:
    """Refuse an edit based on an older revision of a row locked with select_for_update."""
    if expected is not None and row.lock_version != expected:
        raise EditConflict(message)


def _located(loc: tuple[Any, ...], msg: str) -> str:
    return f"{'.'.join(map(str, loc))}: {msg}" if loc else msg
