"""Pass 2, resolve: aliases to a stable entity id, role inheritance, delegation.

Owns the refusals `entity_unresolved`, `entity_ambiguous` and `delegation_invalid`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from compiler._codes import ALL_ENTITIES, Outcome, Pass, RefusalReason
from compiler._errors import Refused

if TYPE_CHECKING:
    from compiler._slotted import AnyDelegation as Delegation
    from compiler._slotted import AnyDirectory as Directory
    from compiler._slotted import AnyRequest as Request
from compiler._trace import Trace


class Resolution:
    __slots__ = ("entity", "effective_roles", "principal_roles")

    def __init__(
        self,
        entity: str,
        effective_roles: frozenset[str],
        principal_roles: frozenset[str] = frozenset(),
    ) -> None:
        self.entity = entity
        self.effective_roles = effective_roles
        self.principal_roles = principal_roles
        """The principal's own roles, expanded, before any delegation scoping: a deny on any
        of them still applies when a service acts on the principal's behalf."""

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Resolution):
            return NotImplemented
        return (self.entity, self.effective_roles, self.principal_roles) == (
            other.entity,
            other.effective_roles,
            other.principal_roles,
        )

    def __hash__(self) -> int:
        return hash((self.entity, self.effective_roles, self.principal_roles))

    def __repr__(self) -> str:
        return (
            f"Resolution(entity={self.entity!r}, effective_roles={self.effective_roles!r}, "
            f"principal_roles={self.principal_roles!r})"
        )


def resolve(request: Request, directory: Directory, trace: Trace) -> Resolution:
    entity = resolve_entity(request.entity, directory.entities)
    trace.add(Pass.RESOLVE, Outcome.RESOLVED, item_id=entity, detail="entity")
    expanded = expand_roles(request.roles, directory.role_parents)
    roles = expanded
    if request.delegation is not None:
        check_delegation(request.delegation, request.principal, request.decision_date)
        roles = expanded & frozenset(request.delegation.scopes)
        trace.add(Pass.RESOLVE, Outcome.RESOLVED, detail="delegation")
    return Resolution(entity=entity, effective_roles=roles, principal_roles=expanded)


def resolve_entity(name: str, entities: Mapping[str, Iterable[str]]) -> str:
    """An entity id given directly wins; otherwise exactly one entity must carry the alias.

    With no directory the name is taken as the id (the caller supplied stable ids). `"*"`
    marks candidates for every entity and is no entity a request can be about.
    """
    if name == ALL_ENTITIES:
        raise Refused(Pass.RESOLVE, RefusalReason.ENTITY_UNRESOLVED)
    if not entities or name in entities:
        return name
    wanted = name.casefold()
    owners = sorted(
        entity_id
        for entity_id, aliases in entities.items()
        if any(alias.casefold() == wanted for alias in aliases)
    )
    if not owners:
        raise Refused(Pass.RESOLVE, RefusalReason.ENTITY_UNRESOLVED)
    if len(owners) > 1:
        raise Refused(Pass.RESOLVE, RefusalReason.ENTITY_AMBIGUOUS)
    if owners[0] == ALL_ENTITIES:
        raise Refused(Pass.RESOLVE, RefusalReason.ENTITY_UNRESOLVED)
    return owners[0]


def expand_roles(roles: Iterable[str], parents: Mapping[str, Iterable[str]]) -> frozenset[str]:
    """The roles with every role they inherit, through any depth; cycles are harmless."""
    seen: set[str] = set()
    pending = list(roles)
    while pending:
        role = pending.pop()
        if role in seen:
            continue
        seen.add(role)
        pending.extend(parents.get(role, ()))
    return frozenset(seen)


def check_delegation(delegation: Delegation, principal: str, on: dt.date) -> None:
    if delegation.revoked:
        problem = "revoked"
    elif delegation.on_behalf_of != principal:
        problem = "principal_mismatch"
    elif on < delegation.valid_from:
        problem = "not_yet_valid"
    elif delegation.valid_to is not None and on > delegation.valid_to:
        problem = "expired"
    else:
        return
    raise Refused(Pass.RESOLVE, RefusalReason.DELEGATION_INVALID, problem)
