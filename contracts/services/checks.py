"""What every service checks before it writes: the actor's permission, the row's optimistic
lock, the model's own validation."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.contrib.auth.models import User

from contracts import permissions
from contracts.permissions import NOT_ALLOWED

# Who makes a change: a signed-in account (the project keeps Django's own user model), which
# the service still checks holds the permission the change needs.
Actor = User

__all__ = ["NOT_ALLOWED", "STALE_EDIT", "Actor", "EditConflict", "check_lock"]

# Messages tests assert on.
STALE_EDIT = (
    "Someone changed this contract after you opened it, so nothing was saved. "
    "The current version is shown below; make your change again if it is still needed."
)


class EditConflict(Exception):
    """The edit was based on a revision that is no longer current; nothing was changed."""

    def __init__(self, message: str = STALE_EDIT) -> None:
        super().__init__(message)
        self.message = message


def check_lock(row: Any, expected: int | None, message: str = STALE_EDIT) -> None:
    """Refuse an edit based on an older revision of a row the caller holds locked
    (`select_for_update`). `expected` is the `lock_version` the form was rendered with; None
    (a form that adds a row, a button that does not say) compares nothing."""
    if expected is not None and row.lock_version != expected:
        raise EditConflict(message)


def _require(actor: Actor, perm: str, obj: Any = None) -> None:
    permissions.require(actor, perm, obj)


def _full_clean(instance: Any, *, exclude: Iterable[str] = ()) -> None:
    # Uniqueness is checked by the services themselves, with their own messages.
    instance.full_clean(exclude=list(exclude), validate_unique=False, validate_constraints=False)
