"""Site groups and the per-decision-type roles granted with django-guardian.

Site groups say what a person may do across the site (a policy owner may create decision
types and propose catalogue changes; a catalogue manager changes the shared source-class
catalogue, which every decision type's lint and compile read). What they may do with one
decision type is an object permission on it, granted per person by `services.access_grant`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, cast

from django.contrib.auth.models import Group, Permission
from guardian.shortcuts import get_user_perms, get_users_with_perms

POLICY_OWNERS = "Policy owners"
RISK_REVIEWERS = "Risk reviewers"
VIEWERS = "Viewers"
CATALOGUE_MANAGERS = "Catalogue managers"

MANAGE_CATALOGUE = "contracts.manage_catalogue"
PROPOSE_CATALOGUE_CHANGE = "contracts.add_sourceclassproposal"

VIEW = "view_decisiontype"
EDIT = "change_decisiontype"
REVIEW = "review_decisiontype"

# Site-wide (model-level) permissions of each group, as "app_label.codename".
GROUP_PERMISSIONS: dict[str, tuple[str, ...]] = {
    POLICY_OWNERS: ("contracts.add_decisiontype", PROPOSE_CATALOGUE_CHANGE),
    RISK_REVIEWERS: (),
    VIEWERS: (),
    CATALOGUE_MANAGERS: (MANAGE_CATALOGUE,),
}

# Granted to policy owners before catalogue managers existed; migration 0004 takes them back.
FORMER_POLICY_OWNER_PERMISSIONS = ("contracts.add_sourceclass", "contracts.change_sourceclass")


class Role(StrEnum):
    """What a person is for one decision type."""

    OWNER = "owner"
    REVIEWER = "reviewer"
    VIEWER = "viewer"


ROLE_PERMISSIONS: dict[Role, tuple[str, ...]] = {
    Role.OWNER: (VIEW, EDIT),
    Role.REVIEWER: (VIEW, REVIEW),
    Role.VIEWER: (VIEW,),
}


def role_from_perms(perms: set[str] | list[str]) -> Role | None:
    """The strongest role a set of object-permission codenames amounts to."""
    for role in (Role.OWNER, Role.REVIEWER, Role.VIEWER):
        if set(ROLE_PERMISSIONS[role]) <= set(perms):
            return role
    return None


def role_of(user: Any, decision_type: Any) -> Role | None:
    """The role granted to a person on a decision type (superusers need none to act)."""
    return role_from_perms(list(get_user_perms(user, decision_type)))


def people_with_roles(decision_type: Any) -> list[tuple[Any, Role]]:
    """Everyone granted a role on the type, owners first, then by username."""
    # With attach_perms, guardian answers a mapping of each person to their permission names.
    granted = cast(
        dict[Any, list[str]],
        get_users_with_perms(decision_type, attach_perms=True, with_group_users=False),
    )
    people = [(user, role_from_perms(perms)) for user, perms in granted.items()]
    order = list(Role)
    return sorted(
        ((user, role) for user, role in people if role is not None),
        key=lambda pair: (order.index(pair[1]), pair[0].get_username()),
    )


def ensure_site_groups(**kwargs: Any) -> None:
    """Create the site groups with their permissions; safe to call any number of times."""
    for name, perms in GROUP_PERMISSIONS.items():
        group, _ = Group.objects.get_or_create(name=name)
        wanted: list[Permission] = []
        for perm in perms:
            app_label, codename = perm.split(".")
            wanted.extend(
                Permission.objects.filter(content_type__app_label=app_label, codename=codename)
            )
        group.permissions.add(*wanted)
