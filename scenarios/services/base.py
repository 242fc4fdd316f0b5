"""What every write of this app shares: the permission checks, the optimistic-lock check and
the located message of a nested field."""

from __future__ import annotations

from typing import Any

from contracts import permissions
from contracts.models import DecisionType
from contracts.services import Actor, check_lock

# The permission and lock rules are contracts' own (`contracts.permissions`,
# `contracts.services.check_lock`); scenarios adds who may run a suite.
NOT_ALLOWED = permissions.NOT_ALLOWED
can_edit = permissions.can_edit
_require_edit = permissions.require_edit
_check_lock = check_lock


def can_run(actor: Actor, decision_type: DecisionType) -> bool:
    """Owners and reviewers run suites (a reviewer checks what they are asked to approve)."""
    return can_edit(actor, decision_type) or permissions.can_review(actor, decision_type)


def _located(loc: tuple[Any, ...], msg: str) -> str:
    return f"{'.'.join(map(str, loc))}: {msg}" if loc else msg
