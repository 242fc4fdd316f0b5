"""What a person may do with one decision type: the one place services, selectors and views ask.

The rights are django-guardian object permissions granted per person (`contracts.roles`): an
owner edits the type's drafts and its people, a reviewer reviews its submitted versions.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied

from . import roles

# Messages tests assert on.
NOT_ALLOWED = "You are not allowed to do this."


def has_permission(user: Any, perm: str, obj: Any = None) -> bool:
    """`perm` is the full name (`contracts.change_decisiontype`); `obj` the object it is on."""
    return bool(user.is_authenticated and user.has_perm(perm, obj))


def require(user: Any, perm: str, obj: Any = None) -> None:
    if not has_permission(user, perm, obj):
        raise PermissionDenied(NOT_ALLOWED)


def can_edit(user: Any, decision_type: Any) -> bool:
    """Owners (and superusers): edit the type's drafts, start new ones, manage its people."""
    return has_permission(user, f"contracts.{roles.EDIT}", decision_type)


def can_review(user: Any, decision_type: Any) -> bool:
    return has_permission(user, f"contracts.{roles.REVIEW}", decision_type)


def require_edit(user: Any, decision_type: Any) -> None:
    """`PermissionDenied` (403) unless `user` may edit `decision_type`."""
    require(user, f"contracts.{roles.EDIT}", decision_type)
