"""Site groups and the per-decision-type roles granted with django-guardian.

Site groups say what a person may do across the site (a policy owner may create decision
types and edit the source-class catalogue). What they may do with one decision type is an
object permission on it, granted per person by `services.access_grant`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from django.contrib.auth.models import Group, Permission

POLICY_OWNERS = "Policy owners"
RISK_REVIEWERS = "Risk reviewers"
VIEWERS = "Viewers"

VIEW = "view_decisiontype"
EDIT = "change_decisiontype"
REVIEW = "review_decisiontype"

# Site-wide (model-level) permissions of each group, as "app_label.codename".
GROUP_PERMISSIONS: dict[str, tuple[str, ...]] = {
    POLICY_OWNERS: (
        "contracts.add_decisiontype",
        "contracts.add_sourceclass",
        "contracts.change_sourceclass",
    ),
    RISK_REVIEWERS: (),
    VIEWERS: (),
}


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


def ensure_site_groups(**kwargs: Any) -> None:
    """Create the three site groups with their permissions; safe to call any number of times."""
    for name, perms in GROUP_PERMISSIONS.items():
        group, _ = Group.objects.get_or_create(name=name)
        wanted = []
        for perm in perms:
            app_label, codename = perm.split(".")
            wanted.extend(
                Permission.objects.filter(content_type__app_label=app_label, codename=codename)
            )
        group.permissions.add(*wanted)
