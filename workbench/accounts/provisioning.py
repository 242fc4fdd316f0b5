"""Roles from the provider's groups, applied at every sign-in through it."""

from __future__ import annotations

from collections.abc import Sequence

from django.contrib.auth.models import Group, User
from django.db import transaction

from contracts import roles, services
from contracts.models import AuditAction, DecisionType

from .mapping import GroupMap


@transaction.atomic
def roles_apply(*, user: User, provider_groups: Sequence[str], group_map: GroupMap) -> bool:
    """Make the person's site groups, and their roles on every decision type the map names,
    exactly what `provider_groups` give; each change is audited. True if the map knows any
    of the groups (the person may use the workbench), else False: every role the map decides
    has then been taken away.

    Roles on types the map does not name are left as the workbench's own pages set them.
    """
    groups = sorted(set(provider_groups))
    site_groups_set(user=user, wanted=group_map.site_groups_for(groups), provider_groups=groups)
    wanted_roles = group_map.roles_for(groups)
    for decision_type in DecisionType.objects.filter(key__in=group_map.managed_types()):
        role = wanted_roles.get(decision_type.key)
        services.access_set_by_provider(
            decision_type=decision_type,
            user=user,
            role=roles.Role(role) if role else None,
            provider_groups=groups,
        )
    return bool(group_map.mapped(groups))


def site_groups_set(*, user: User, wanted: set[str], provider_groups: Sequence[str]) -> None:
    """Put the person in exactly the `wanted` site groups, auditing each change."""
    current = set(
        user.groups.filter(name__in=roles.GROUP_PERMISSIONS).values_list("name", flat=True)
    )
    username = user.get_username()
    changes = [(name, True) for name in sorted(wanted - current)]
    changes += [(name, False) for name in sorted(current - wanted)]
    for name, added in changes:
        group = Group.objects.get(name=name)
        if added:
            user.groups.add(group)
        else:
            user.groups.remove(group)
        services.audit_record(
            actor=None,
            action=AuditAction.SIGN_IN_GROUP_ADDED if added else AuditAction.SIGN_IN_GROUP_REMOVED,
            summary=f"Signing in {'put' if added else 'took'} {username} "
            f"{'in' if added else 'out of'} {name} (identity provider groups)",
            changes={
                "user": username,
                "site_group": name,
                "provider_groups": list(provider_groups),
            },
        )
