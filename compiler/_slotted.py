"""The validated input as plain objects, for a compile that never imports pydantic.

`compiler.models` is the interface: every caller of the library validates into its frozen
pydantic models. Importing pydantic and building those models costs more than a small compile
itself, so the CLI validates a document it has parsed with `_slotted_reader.load_plain` into
these slotted classes instead: the same attribute names and values, read by the same passes,
and no behaviour of their own beyond what the passes call (`candidates_in_id_order`,
`full_rank`, `allowed_forms`, `proposition`). Nothing here validates; `_slotted_reader` only
builds these from what it has checked, and hands anything it is unsure of to pydantic.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from compiler._candidate_fields import CANDIDATE_FIELDS
from compiler._codes import OrderRole, Requirement


class PlainDelegation:
    __slots__ = ("service", "on_behalf_of", "scopes", "valid_from", "valid_to", "revoked")

    def __init__(
        self,
        service: str,
        on_behalf_of: str,
        scopes: tuple[str, ...],
        valid_from: dt.date,
        valid_to: dt.date | None,
        revoked: bool,
    ) -> None:
        self.service = service
        self.on_behalf_of = on_behalf_of
        self.scopes = scopes
        self.valid_from = valid_from
        self.valid_to = valid_to
        self.revoked = revoked


class PlainPolicyRef:
    __slots__ = ("name", "version")

    def __init__(self, name: str, version: int) -> None:
        self.name = name
        self.version = version


class PlainRequest:
    __slots__ = (
        "decision_type",
        "principal",
        "roles",
        "purpose",
        "entity",
        "decision_date",
        "token_budget",
        "delegation",
        "named",
        "expected_policy",
    )

    def __init__(self, **fields: Any) -> None:
        for name in self.__slots__:
            setattr(self, name, fields[name])

    decision_type: str
    principal: str
    roles: tuple[str, ...]
    purpose: str
    entity: str
    decision_date: dt.date
    token_budget: int
    delegation: PlainDelegation | None
    named: tuple[str, ...]
    expected_policy: PlainPolicyRef | None


class PlainProposition:
    __slots__ = ("key", "accepted_classes", "required", "max_items", "description")

    def __init__(
        self,
        key: str,
        accepted_classes: tuple[str, ...],
        required: bool,
        max_items: int,
        description: str,
    ) -> None:
        self.key = key
        self.accepted_classes = accepted_classes
        self.required = required
        self.max_items = max_items
        self.description = description


class PlainPolicy:
    __slots__ = ("name", "version", "min_relevance", "mandatory_form", "role_order", "on_overrun")

    def __init__(
        self,
        name: str,
        version: int,
        min_relevance: float,
        mandatory_form: str,
        role_order: tuple[OrderRole, ...],
        on_overrun: str,
    ) -> None:
        self.name = name
        self.version = version
        self.min_relevance = min_relevance
        self.mandatory_form = mandatory_form
        self.role_order = role_order
        self.on_overrun = on_overrun


class PlainContract:
    __slots__ = ("decision_type", "version", "purposes", "propositions", "policy")

    def __init__(
        self,
        decision_type: str,
        version: str,
        purposes: tuple[str, ...],
        propositions: tuple[PlainProposition, ...],
        policy: PlainPolicy,
    ) -> None:
        self.decision_type = decision_type
        self.version = version
        self.purposes = purposes
        self.propositions = propositions
        self.policy = policy

    def proposition(self, key: str) -> PlainProposition | None:
        return next((p for p in self.propositions if p.key == key), None)

    def json_value(self) -> dict[str, Any]:
        """What `Contract.model_dump(mode="json")` gives for the same contract."""
        policy = self.policy
        return {
            "decision_type": self.decision_type,
            "version": self.version,
            "purposes": list(self.purposes),
            "propositions": [
                {
                    "key": p.key,
                    "accepted_classes": list(p.accepted_classes),
                    "required": p.required,
                    "max_items": p.max_items,
                    "description": p.description,
                }
                for p in self.propositions
            ],
            "policy": {
                "name": policy.name,
                "version": policy.version,
                "min_relevance": policy.min_relevance,
                "mandatory_form": policy.mandatory_form,
                "role_order": [r.value for r in policy.role_order],
                "on_overrun": policy.on_overrun,
            },
        }


class PlainDirectory:
    __slots__ = ("entities", "role_parents")

    def __init__(
        self, entities: dict[str, tuple[str, ...]], role_parents: dict[str, tuple[str, ...]]
    ) -> None:
        self.entities = entities
        self.role_parents = role_parents


class PlainForm:
    __slots__ = ("rank", "tokens", "content")

    def __init__(self, rank: int, tokens: int, content: str) -> None:
        self.rank = rank
        self.tokens = tokens
        self.content = content


class PlainSource:
    __slots__ = ("kind", "ref")

    def __init__(self, kind: str, ref: str) -> None:
        self.kind = kind
        self.ref = ref


class PlainCandidate:
    """A candidate; the attributes are set by `_slotted_reader`, the defaults are the model's."""

    __slots__ = tuple(CANDIDATE_FIELDS)

    id: str
    entity: str
    allowed_roles: tuple[str, ...]
    allowed_purposes: tuple[str, ...]
    denied_roles: tuple[str, ...]
    denied_principals: tuple[str, ...]
    evidence_class: str
    supports: tuple[str, ...]
    contradicts: tuple[str, ...]
    valid_from: dt.date
    valid_to: dt.date | None
    superseded: bool
    superseded_by: str | None
    tokens: int
    relevance: float
    content: str
    role: OrderRole
    requirement: Requirement
    forms: tuple[PlainForm, ...]
    floor: int | None
    depends_on: tuple[str, ...]
    group: str | None
    group_required: bool
    source: PlainSource | None

    @property
    def full_rank(self) -> int:
        """The candidate's own content is its fullest form, ranked above every listed form."""
        return max((f.rank for f in self.forms), default=-1) + 1

    def allowed_forms(self) -> list[PlainForm]:
        """Every representation at or above the floor, cheapest first."""
        full = PlainForm(self.full_rank, self.tokens, self.content)
        floor = self.floor or 0
        forms = [f for f in (*self.forms, full) if f.rank >= floor]
        return sorted(forms, key=lambda f: (f.tokens, -f.rank))


class PlainInput:
    __slots__ = ("request", "contract", "directory", "candidates")

    def __init__(
        self,
        request: PlainRequest,
        contract: PlainContract,
        directory: PlainDirectory,
        candidates: tuple[PlainCandidate, ...],
    ) -> None:
        self.request = request
        self.contract = contract
        self.directory = directory
        self.candidates = candidates

    def candidates_in_id_order(self) -> tuple[PlainCandidate, ...]:
        """`load_plain` sorts them on the way in."""
        return self.candidates


if TYPE_CHECKING:
    # What the passes read: a validated model or its plain twin (the passes need no more than
    # the attributes both have).
    from compiler import _input as models

    AnyCandidate = models.Candidate | PlainCandidate
    AnyForm = models.Form | PlainForm
    AnyRequest = models.Request | PlainRequest
    AnyContract = models.Contract | PlainContract
    AnyProposition = models.Proposition | PlainProposition
    AnyDirectory = models.Directory | PlainDirectory
    AnyDelegation = models.Delegation | PlainDelegation
    AnyInput = models.CompileInput | PlainInput
