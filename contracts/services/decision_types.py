"""Decision types and who holds which role on one."""

from __future__ import annotations

from collections.abc import Sequence

from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from guardian.shortcuts import assign_perm, remove_perm

from contracts import roles
from contracts.models import AuditAction, ContractVersion, DecisionType

from .audit import audit_record
from .checks import Actor, _full_clean, _require
from .drafts import _bump

# Messages tests assert on.
DUPLICATE_DECISION_TYPE = (
    "You can already see a decision type with this key: open it from the dashboard, "
    "or choose another key."
)
# Said to someone with no role on the type holding the key: it does not confirm that a type
# exists, whose it is, or what it is called, only that this key is not free for them.
KEY_UNAVAILABLE = "That key cannot be used: choose another."
NO_ROLE = "{username} has no role on this decision type."
LAST_OWNER = "A decision type needs an owner: make someone else owner first."


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
    existing = DecisionType.objects.filter(key=key).first()
    if existing is not None:
        _refuse_taken_key(actor, existing)
    try:
        with transaction.atomic():
            decision_type.save()
    except IntegrityError:
        # Created by someone else since the check above: refused like any unavailable key.
        raise ValidationError({"key": KEY_UNAVAILABLE}) from None
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


def _refuse_taken_key(actor: Actor, existing: DecisionType) -> None:
    """Whoever may see the type holding the key is told so; anyone else gets the message any
    unavailable key gets, so that creating a type is no way to learn another team's types."""
    if actor.has_perm(f"contracts.{roles.VIEW}", existing):
        raise ValidationError({"key": DUPLICATE_DECISION_TYPE})
    raise ValidationError({"key": KEY_UNAVAILABLE})


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


@transaction.atomic
def access_set_by_provider(
    *,
    decision_type: DecisionType,
    user: AbstractBaseUser,
    role: roles.Role | None,
    provider_groups: Sequence[str],
) -> bool:
    """Give `user` exactly `role` on the type (None: no role), as the identity provider's
    groups say at sign-in; True if that changed anything.

    No person acts, so no permission is checked and the last owner may go: a person the
    provider no longer puts in an owning group must lose the role even if nobody else holds
    it (a superuser can then name a new owner). The change is audited with the groups.
    """
    DecisionType.objects.select_for_update().get(pk=decision_type.pk)
    before = roles.role_of(user, decision_type)
    if before == role:
        return False
    _clear_roles(user, decision_type)
    for perm in roles.ROLE_PERMISSIONS[role] if role is not None else ():
        assign_perm(perm, user, decision_type)
    username = user.get_username()
    audit_record(
        actor=None,
        action=AuditAction.SIGN_IN_ROLE_SET if role else AuditAction.SIGN_IN_ROLE_REMOVED,
        summary=(
            f"Signing in made {username} {role} of '{decision_type.key}'"
            if role
            else f"Signing in took {username}'s role ({before}) on '{decision_type.key}' away"
        )
        + " (identity provider groups)",
        decision_type=decision_type,
        changes={
            "user": username,
            "before": str(before) if before else None,
            "role": str(role) if role else None,
            "provider_groups": list(provider_groups),
        },
    )
    return True


def _clear_roles(user: AbstractBaseUser, decision_type: DecisionType) -> None:
    for perm in (roles.VIEW, roles.EDIT, roles.REVIEW):
        remove_perm(perm, user, decision_type)


def _keep_an_owner(decision_type: DecisionType, *, leaving: AbstractBaseUser) -> None:
    owners = [u for u, role in roles.people_with_roles(decision_type) if role == roles.Role.OWNER]
    if [u.pk for u in owners] == [leaving.pk]:
        raise ValidationError({"username": LAST_OWNER})
