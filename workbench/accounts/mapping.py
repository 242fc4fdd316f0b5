"""The documented mapping from the provider's group claims to the workbench's roles.

It is data, read from `WORKBENCH_SSO_GROUP_MAP` (JSON) when the settings load, so it is
reviewed and deployed with the rest of the configuration and the provider stays the one place
where membership is managed. This module imports no model: the settings validate with it
before Django's apps are ready.

    {"wb-policy-owners": {"site_groups": ["Policy owners"]},
     "wb-atlas-review":  {"site_groups": ["Risk reviewers"],
                          "roles": {"atlas-credit-review": "reviewer"}}}
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel, ValidationError, field_validator

# The site groups `contracts.roles` defines (a test checks the two lists agree).
SITE_GROUP_NAMES = ("Policy owners", "Risk reviewers", "Viewers", "Catalogue managers")
# A decision type's roles, strongest first (`contracts.roles.Role`).
ROLE_ORDER = ("owner", "reviewer", "viewer")
RoleName = Literal["owner", "reviewer", "viewer"]


class GroupGrant(BaseModel):
    """What membership of one provider group gives."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    site_groups: tuple[str, ...] = ()
    roles: dict[str, RoleName] = Field(default_factory=dict)

    @field_validator("site_groups")
    @classmethod
    def known_site_groups(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [name for name in value if name not in SITE_GROUP_NAMES]
        if unknown:
            raise ValueError(
                f"unknown site group {', '.join(map(repr, unknown))}; "
                f"the site groups are {', '.join(SITE_GROUP_NAMES)}"
            )
        return value


class GroupMap(RootModel[dict[str, GroupGrant]]):
    """Provider group name -> what it gives."""

    model_config = ConfigDict(frozen=True)

    def site_groups_for(self, groups: Iterable[str]) -> set[str]:
        return {name for group in groups for name in self._grant(group).site_groups}

    def roles_for(self, groups: Iterable[str]) -> dict[str, str]:
        """Decision type key -> the strongest role any of `groups` gives on it."""
        wanted: dict[str, str] = {}
        for group in groups:
            for key, role in self._grant(group).roles.items():
                if key not in wanted or ROLE_ORDER.index(role) < ROLE_ORDER.index(wanted[key]):
                    wanted[key] = role
        return wanted

    def managed_types(self) -> set[str]:
        """The decision types whose roles the provider decides (every type the map names)."""
        return {key for grant in self.root.values() for key in grant.roles}

    def mapped(self, groups: Iterable[str]) -> list[str]:
        """The groups among `groups` that the map knows."""
        return sorted(group for group in set(groups) if group in self.root)

    def _grant(self, group: str) -> GroupGrant:
        return self.root.get(group, GroupGrant())


def parse_group_map(text: str) -> GroupMap:
    """The map from its JSON text; ValueError naming the group and field that are wrong."""
    try:
        return GroupMap.model_validate_json(text or "{}")
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in problem['loc']) or 'the map'}: "
            f"{problem['msg'].removeprefix('Value error, ')}"
            for problem in error.errors()
        )
        raise ValueError(f"not a valid group map ({problems})") from None
