"""The compiler's input: frozen pydantic models with the field names of docs/design.md.

Field-level problems (a negative token count, a relevance outside [0, 1], a `valid_to` before
`valid_from`) are reported by pydantic for every candidate at once; problems that span several
candidates (duplicate ids, a supersession loop, a required group that mixes requirement
classes, a mismatched policy) are found by `_cross_checks.cross_reference_problems` on the raw
document and merged into the same `ValidationError`, so one call lists everything wrong.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from operator import attrgetter
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    StrictBool,
    StrictInt,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from compiler._codes import OrderRole, Requirement

DEFAULT_ROLE_ORDER: tuple[OrderRole, ...] = tuple(OrderRole)

# The boundary is strict for scalars: "12" is not a token count, true is not 1, "0.5" is not a
# relevance and 1 is not a flag (lax coercion would hash and compile what the caller did not
# write). Dates still come from ISO strings, JSON having no date type.
Identifier = Annotated[str, Field(min_length=1, strict=True)]
Tokens = Annotated[int, Field(ge=0, strict=True)]
Score = Annotated[float, Field(ge=0.0, le=1.0, strict=True)]


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# --------------------------------------------------------------------------- input


class Delegation(Frozen):
    service: Identifier
    on_behalf_of: Identifier
    scopes: tuple[str, ...]
    valid_from: dt.date
    valid_to: dt.date | None = None
    revoked: StrictBool = False

    @model_validator(mode="after")
    def _interval(self) -> Delegation:
        if self.valid_to is not None and self.valid_to < self.valid_from:
            raise ValueError("delegation valid_to is before its valid_from")
        return self


class PolicyRef(Frozen):
    name: Identifier
    version: StrictInt


class Request(Frozen):
    decision_type: Identifier
    principal: Identifier
    roles: tuple[str, ...]
    purpose: Identifier
    entity: Identifier
    decision_date: dt.date
    token_budget: Tokens
    delegation: Delegation | None = None
    named: tuple[str, ...] = ()
    expected_policy: PolicyRef | None = None


class Proposition(Frozen):
    key: Identifier
    accepted_classes: tuple[str, ...]
    required: StrictBool = True
    max_items: int = Field(1, ge=1, strict=True)
    description: str = ""

    @field_validator("accepted_classes")
    @classmethod
    def _distinct_classes(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        seen = [c for i, c in enumerate(value) if c in value[:i]]
        if seen:
            raise ValueError(f"accepted class '{seen[0]}' is listed twice")
        return value


class Policy(Frozen):
    """The assembly policy. Every field is read by the planner; unsupported values are refused."""

    name: Identifier = "default"
    version: int = Field(1, ge=1, strict=True)
    min_relevance: Score = 0.0
    mandatory_form: Literal["cheapest"] = "cheapest"
    role_order: tuple[OrderRole, ...] = DEFAULT_ROLE_ORDER
    on_overrun: Literal["drop_last_discretionary"] = "drop_last_discretionary"

    @field_validator("role_order")
    @classmethod
    def _permutation(cls, value: tuple[OrderRole, ...]) -> tuple[OrderRole, ...]:
        if sorted(value) != sorted(OrderRole):
            names = ", ".join(OrderRole)
            raise ValueError(f"role_order must list each of {names} exactly once")
        return value


class Contract(Frozen):
    decision_type: Identifier
    version: str
    purposes: tuple[str, ...]
    propositions: tuple[Proposition, ...]
    policy: Policy = Policy()

    @field_validator("propositions")
    @classmethod
    def _distinct_keys(cls, value: tuple[Proposition, ...]) -> tuple[Proposition, ...]:
        keys = [p.key for p in value]
        twice = sorted({k for k in keys if keys.count(k) > 1})
        if twice:
            raise ValueError(f"proposition key '{twice[0]}' is used more than once")
        return value

    def proposition(self, key: str) -> Proposition | None:
        return next((p for p in self.propositions if p.key == key), None)


class Directory(Frozen):
    entities: dict[str, tuple[str, ...]] = {}
    role_parents: dict[str, tuple[str, ...]] = {}


class Form(Frozen):
    rank: int = Field(ge=0, strict=True)
    tokens: Tokens
    content: str


class Source(Frozen):
    kind: str
    ref: str


class Candidate(Frozen):
    id: Identifier
    # Its own Field rather than `Identifier` with a description: pydantic 2.11, the lowest
    # release allowed, merged that with a default another model gave `Identifier`.
    entity: str = Field(
        min_length=1,
        strict=True,
        description='The entity id it concerns, or "*" when it applies to every entity.',
    )
    allowed_roles: tuple[str, ...]
    allowed_purposes: tuple[str, ...]
    denied_roles: tuple[str, ...] = ()
    denied_principals: tuple[str, ...] = ()
    evidence_class: Identifier
    supports: tuple[str, ...]
    contradicts: tuple[str, ...] = ()
    valid_from: dt.date
    valid_to: dt.date | None = None
    superseded: StrictBool = False
    superseded_by: str | None = Field(
        None,
        description="The candidate that replaces it; an id outside the pool still makes it "
        "superseded.",
    )
    tokens: Tokens
    relevance: Score
    content: str
    role: OrderRole = OrderRole.EVIDENCE
    requirement: Requirement = Requirement.PREFERRED
    forms: tuple[Form, ...] = ()
    floor: int | None = Field(None, ge=0, strict=True)
    depends_on: tuple[str, ...] = Field(
        (),
        description="Candidates that must enter the packet with it; an id outside the pool "
        "keeps it out (dependency_absent).",
    )
    group: str | None = None
    group_required: StrictBool = False
    source: Source | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Candidate:
        # Candidates of one pool set the same few sets of fields: they share one set object
        # (a frozen model never changes it; a copy copies it), 700 bytes less per candidate.
        fields_set = self.__pydantic_fields_set__
        shared = _FIELDS_SETS.setdefault(frozenset(fields_set), fields_set)
        if shared is not fields_set:
            object.__setattr__(self, "__pydantic_fields_set__", shared)
        # Most candidates list no forms, floor, required group or dependency: one test each.
        forms, floor = self.forms, self.floor
        if not (forms or floor is not None or self.group_required or self.depends_on) and (
            self.valid_to is None or self.valid_to >= self.valid_from
        ):
            return self
        if self.valid_to is not None and self.valid_to < self.valid_from:
            raise ValueError(f"valid_to {self.valid_to} is before valid_from {self.valid_from}")
        ranks = [f.rank for f in self.forms]
        if len(set(ranks)) != len(ranks):
            raise ValueError("two forms share one rank")
        if self.floor is not None and self.floor > self.full_rank:
            raise ValueError(f"floor {self.floor} is above the full form's rank {self.full_rank}")
        if self.group_required and self.group is None:
            raise ValueError("group_required is set but the candidate names no group")
        if self.id in self.depends_on:
            raise ValueError("a candidate cannot depend on itself")
        return self

    @property
    def full_rank(self) -> int:
        """The candidate's own content is its fullest form, ranked above every listed form."""
        return max((f.rank for f in self.forms), default=-1) + 1

    def allowed_forms(self) -> list[Form]:
        """Every representation at or above the floor, cheapest first."""
        full = Form(rank=self.full_rank, tokens=self.tokens, content=self.content)
        floor = self.floor or 0
        forms = [f for f in (*self.forms, full) if f.rank >= floor]
        return sorted(forms, key=lambda f: (f.tokens, -f.rank))


_FIELDS_SETS: dict[frozenset[str], set[str]] = {}
"""One set object per distinct set of fields a candidate was given (one per combination of
its optional fields at most)."""


class CompileInput(Frozen):
    request: Request
    contract: Contract
    directory: Directory = Directory()
    candidates: tuple[Candidate, ...]

    # The candidates tuple validation sorted by id; a copy with other candidates
    # (model_copy(update=...)) no longer matches it and is sorted again when compiled.
    _ordered: tuple[Candidate, ...] | None = PrivateAttr(default=None)

    def candidates_in_id_order(self) -> tuple[Candidate, ...]:
        if self._ordered is not self.candidates:
            return tuple(sorted(self.candidates, key=attrgetter("id")))
        return self.candidates

    @model_validator(mode="wrap")
    @classmethod
    def _every_problem_at_once(cls, data: Any, handler: Any, info: ValidationInfo) -> CompileInput:
        """Validate, listing every problem at the caller's indices, with the candidates then
        put in id order.

        With the context `{"prevalidated": True}` (`_validate_input.load_input_consuming`) the
        candidates are models already and the raw document is gone: anything that would need
        it to be located raises `NeedsDocument` instead."""
        if isinstance(data, CompileInput):
            return data
        from compiler._cross_checks import (
            cross_reference_problems,
            may_have_problems,
            unsafe_integer_problems,
        )

        problems: list[InitErrorDetails] = []
        model = None
        try:
            model = handler(data)
        except ValidationError as exc:
            problems.extend(
                InitErrorDetails(
                    type=PydanticCustomError(e["type"], _escape(e["msg"])),
                    loc=e["loc"],
                    input=e.get("input"),
                )
                for e in exc.errors()
            )
        else:
            # Validated in the caller's order (so errors carry the caller's indices), then put
            # in id order, the canonical order every pass works in. A stable sort, so a
            # duplicate id (reported below) keeps the caller's order.
            # (Sorting a pool already in id order is one linear pass.)
            ordered = tuple(sorted(model.candidates, key=attrgetter("id")))
            object.__setattr__(model, "candidates", ordered)
        # The raw-document checks run only when there is something to locate: a valid model
        # that one pass over it finds clean needs no second walk over the JSON.
        if model is None or may_have_problems(model):
            if info.context and info.context.get("prevalidated"):
                raise NeedsDocument
            if isinstance(data, Mapping) and isinstance(data.get("contract"), BaseModel):
                # A contract given as a validated model is located by its JSON, as written.
                data = {**data, "contract": data["contract"].model_dump(mode="json")}
            problems.extend(
                InitErrorDetails(
                    type=PydanticCustomError("invalid_reference", _escape(msg)),
                    loc=loc,
                    input=None,
                )
                for loc, msg in (*cross_reference_problems(data), *unsafe_integer_problems(data))
            )
        if problems:
            problems.sort(key=lambda p: _location_key(p["loc"]))
            raise ValidationError.from_exception_data(cls.__name__, problems)
        assert model is not None
        model._ordered = model.candidates
        return model


class NeedsDocument(Exception):  # noqa: N818 - a signal, not an error shown to anyone
    """A prevalidated input has a problem only the raw document can locate."""


def _location_key(loc: Any) -> tuple[tuple[int, Any], ...]:
    return tuple((0, part) if isinstance(part, int) else (1, str(part)) for part in loc)


def _escape(message: str) -> str:
    # PydanticCustomError treats {name} as a placeholder.
    return message.replace("{", "{{").replace("}", "}}")
