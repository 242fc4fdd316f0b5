"""What a judge reads and writes: the three kinds of `Verdict`, the `Context` and `Case` of one
variant against its base, and `Relation`, one operator's entry in the registry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict

from compiler._input import Candidate, CompileInput
from compiler._output import CompileOutput, Slot
from compiler._perturb.arguments import Perturbation
from compiler._perturb.flips import admitted_in, slot_states

Kind = Literal["violation", "finding", "expected"]
VIOLATION: Final[Kind] = "violation"
FINDING: Final[Kind] = "finding"
EXPECTED: Final[Kind] = "expected"
SEVERITY = {EXPECTED: 0, FINDING: 1, VIOLATION: 2}


class Verdict(BaseModel):
    """One judgement: of a slot (`proposition`), or of the variant as a whole (None)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Kind
    proposition: str | None
    message: str
    perturbation: str | None  # the perturbation's name; None for a corpus-derived finding
    items: tuple[str, ...] = ()  # the items (ids) the message names as the cause
    # What the verdict is about beyond its proposition and relation, with no item ids (the
    # evidence class of a promotion or contradiction, the purpose of a purpose probe): verdicts
    # with the same operator, proposition and cause are one cause for a reviewer.
    cause: str = ""

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


@dataclass(frozen=True)
class Context:
    """What a judge reads besides the two outputs: the base input, the variant's input, the
    catalogue's weak classes, and the catalogue's authority tiers (class key -> tier, 1 the
    most authoritative; empty when the caller has no catalogue)."""

    document: CompileInput
    variant_document: CompileInput
    weak_classes: tuple[str, ...] = ()
    catalogue: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Case:
    """One variant against its base, with the look-ups every judge needs."""

    perturbation: Perturbation
    base: CompileOutput
    variant: CompileOutput
    context: Context

    @cached_property
    def name(self) -> str:
        return self.perturbation.name

    @property
    def args(self) -> dict[str, Any]:
        return self.perturbation.args

    @cached_property
    def before(self) -> dict[str, str]:
        return slot_states(self.base, self.context.document)

    @cached_property
    def after(self) -> dict[str, str]:
        return slot_states(self.variant, self.context.document)

    @cached_property
    def items(self) -> dict[str, Candidate]:
        return {c.id: c for c in self.context.variant_document.candidates}

    @cached_property
    def admitted(self) -> set[str]:
        return admitted_in(self.variant)

    def flipped(self, key: str) -> bool:
        return self.before.get(key) != self.after.get(key)

    def slot(self, output: CompileOutput, key: str) -> Slot | None:
        return next((s for s in output.slots if s.proposition == key), None)

    def resting_on(self, output: CompileOutput, key: str) -> tuple[str, ...]:
        slot = self.slot(output, key)
        return slot.resource_ids if slot is not None else ()

    def change(self, key: str) -> str:
        return f"{key} {self.before.get(key)} → {self.after.get(key)}"

    def verdict(
        self, kind: Kind, key: str | None, message: str, items: Iterable[str] = (), cause: str = ""
    ) -> Verdict:
        return Verdict(
            kind=kind, proposition=key, message=message, perturbation=self.name,
            items=tuple(items), cause=cause,
        )  # fmt: skip

    def why_not(self, item_id: str) -> str:
        """Why the variant rejected an item, as `reason/detail`."""
        for r in self.variant.rejected:
            if r["id"] == item_id:
                return r["reason"] + (f"/{r['detail']}" if r["detail"] else "")
        return "absent"


Judge = Callable[[Case], list[Verdict]]


@dataclass(frozen=True)
class Relation:
    operator: str
    description: str  # what the operator does
    relation: str  # what must and must not change
    judged: str  # how a result is judged
    label: Callable[[Perturbation, CompileInput], str]
    judge: Judge


def worst(verdicts: Iterable[Verdict]) -> Kind:
    return max((v.kind for v in verdicts), key=SEVERITY.__getitem__, default=EXPECTED)
