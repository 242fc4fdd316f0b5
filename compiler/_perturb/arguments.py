"""A perturbation as data: each operator's arguments as a strict pydantic model, and
`Perturbation`, which names, checks, applies, stores and replays one.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from functools import cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from compiler._input import CompileInput
from compiler._perturb.operators import CORE_OPERATORS
from compiler._perturb.probes import (
    contradict_classes,
    crowd,
    precedence,
    promote_classes,
    remove_support,
    swap_purpose,
)

OPERATORS: dict[str, Any] = {
    **CORE_OPERATORS,
    "precedence": precedence,
    "swap_purpose": swap_purpose,
    "promote_classes": promote_classes,
    "contradict_classes": contradict_classes,
    "remove_support": remove_support,
    "crowd": crowd,
}
"""Every operator by name: the corpus and request operators, then the contract probes."""

Name = Annotated[str, Field(min_length=1, strict=True)]


class _Arguments(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    def kwargs(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "operator"}


class SwapPrincipalArgs(_Arguments):
    operator: Literal["swap_principal"]
    principal: Name
    roles: list[Name]


class ShiftDaysArgs(_Arguments):
    operator: Literal["shift_days"]
    days: int = Field(ge=-36_500, le=36_500)


class SupersedeArgs(_Arguments):
    operator: Literal["supersede"]
    candidate_id: Name


class SubstituteClassArgs(_Arguments):
    operator: Literal["substitute_class"]
    candidate_id: Name
    evidence_class: Name


class RevokeDelegationArgs(_Arguments):
    operator: Literal["revoke_delegation"]


class ContaminateArgs(_Arguments):
    operator: Literal["contaminate"]
    count: int = Field(ge=0, le=10_000)


class HideArgs(_Arguments):
    operator: Literal["hide"]
    candidate_id: Name


class ContradictArgs(_Arguments):
    operator: Literal["contradict"]
    proposition: Name
    evidence_class: Name | None = None


class PromoteWeakArgs(_Arguments):
    operator: Literal["promote_weak"]
    weak_classes: list[Name] = Field(min_length=1)


class LookAlikeArgs(_Arguments):
    operator: Literal["look_alike"]


class ContradictFirstArgs(_Arguments):
    operator: Literal["contradict_first"]


class SwapEntityArgs(_Arguments):
    operator: Literal["swap_entity"]
    entity: Name


class ReplayExpiryArgs(_Arguments):
    operator: Literal["replay_expiry"]
    # Stored as an ISO date string (JSON has no date type), like the compile input's dates.
    valid_until: Annotated[dt.date, Field(strict=False)]


class PrecedenceArgs(_Arguments):
    operator: Literal["precedence"]


class SwapPurposeArgs(_Arguments):
    operator: Literal["swap_purpose"]
    purpose: Name


class PromoteClassesArgs(_Arguments):
    operator: Literal["promote_classes"]
    classes: list[Name] = Field(min_length=1)


class ContradictClassesArgs(_Arguments):
    operator: Literal["contradict_classes"]
    classes: dict[Name, Name] = Field(min_length=1)  # proposition -> the contradicting class


class RemoveSupportArgs(_Arguments):
    operator: Literal["remove_support"]


class CrowdArgs(_Arguments):
    operator: Literal["crowd"]


PerturbationArgs = Annotated[
    SwapPrincipalArgs
    | ShiftDaysArgs
    | SupersedeArgs
    | SubstituteClassArgs
    | RevokeDelegationArgs
    | ContaminateArgs
    | HideArgs
    | ContradictArgs
    | PromoteWeakArgs
    | LookAlikeArgs
    | ContradictFirstArgs
    | SwapEntityArgs
    | ReplayExpiryArgs
    | PrecedenceArgs
    | SwapPurposeArgs
    | PromoteClassesArgs
    | ContradictClassesArgs
    | RemoveSupportArgs
    | CrowdArgs,
    Field(discriminator="operator"),
]


@cache
def _arguments_adapter() -> TypeAdapter[Any]:
    return TypeAdapter(PerturbationArgs)


@dataclass(frozen=True)
class Perturbation:
    """One operator with its arguments: a name to show, and data to store and replay."""

    operator: str
    args: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        if not self.args:
            return self.operator
        shown = ", ".join(_show(k, v) for k, v in self.args.items())
        return f"{self.operator}({shown})"

    def checked_args(self) -> dict[str, Any]:
        """The arguments, validated against the operator's signature (a `ValueError` naming
        the operator and what is wrong otherwise)."""
        if self.operator not in OPERATORS:
            raise ValueError(f"unknown perturbation operator '{self.operator}'")
        if not isinstance(self.args, dict):
            raise ValueError(f"perturbation '{self.operator}': args must be an object")
        from pydantic import ValidationError

        try:
            checked = _arguments_adapter().validate_python({**self.args, "operator": self.operator})
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc'][1:]) or 'args'}: {e['msg']}"
                for e in exc.errors()
            )
            raise ValueError(f"perturbation '{self.operator}': {problems}") from None
        return checked.kwargs()

    def apply(self, document: CompileInput) -> CompileInput:
        arguments = self.checked_args()
        return OPERATORS[self.operator](document, **arguments)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "operator": self.operator, "args": dict(self.args)}

    @classmethod
    def from_json(cls, data: Any) -> Perturbation:
        """A stored perturbation (`to_json()`), with its arguments checked before any replay."""
        if not isinstance(data, dict) or not isinstance(data.get("operator"), str):
            raise ValueError("a perturbation is an object with an 'operator' name")
        perturbation = cls(data["operator"], data.get("args") or {})
        perturbation.checked_args()
        return perturbation


def _show(key: str, value: Any) -> str:
    if key == "days":
        return f"{value:+d}"
    if isinstance(value, list | tuple):
        return "+".join(map(str, value))
    if isinstance(value, dict):
        return "+".join(f"{k}={v}" for k, v in value.items())
    return str(value)
