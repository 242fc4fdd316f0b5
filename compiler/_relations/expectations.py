"""An owner's expectations on the variants of a scenario, and the one check of expected slots
that a base and a variant share.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from compiler._codes import Result
from compiler._input import CompileInput
from compiler._output import CompileOutput
from compiler._perturb.arguments import Perturbation
from compiler._perturb.flips import admitted_in, slot_states


class VariantExpectation(BaseModel):
    """An owner's expectation on one perturbation of a scenario: "a day after the addendum
    expires, `continuation_rule` is unknown" is `{"operator": "shift_days", "args": {"days":
    32}, "proposition": "continuation_rule", "state": "unknown"}`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    operator: str = Field(min_length=1)
    args: dict[str, Any] = {}
    proposition: str = Field(min_length=1)
    state: Literal["supported", "unknown", "contradicted", "refused"]

    @model_validator(mode="after")
    def _replayable(self) -> VariantExpectation:
        self.perturbation.checked_args()
        return self

    @property
    def perturbation(self) -> Perturbation:
        return Perturbation(self.operator, dict(self.args))


def slot_failures(states: Mapping[str, str], expected: Mapping[str, str]) -> list[dict[str, Any]]:
    """Each expected slot state that the compile does not have: the one check of expected
    slots, for a base and for a variant alike."""
    return [
        {"what": "slot", "key": key, "expected": want, "actual": states.get(key, "missing")}
        for key, want in expected.items()
        if states.get(key, "missing") != want
    ]


PINS = ("decision_ready", "blocking", "required", "resource_ids", "admitted", "rejected")
"""What an expectation can pin besides slot states (`output_failures`)."""


def output_failures(
    output: CompileOutput, document: CompileInput, expected: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """Everything `expected` states that the compile does not give, as rows
    `{"what", "key", "expected", "actual"}`: slot states first (the `slot_failures` rows), then
    `decision_ready`, the `blocking` set, each named slot's `required` flag and `resource_ids`
    (in order), and the `admitted` and `rejected` id sets. A key absent from `expected`, or
    None, is not checked. A refused compile has no slots: a pinned slot field reads "missing".
    """
    failures = slot_failures(slot_states(output, document), expected.get("slots") or {})
    compiled = output.result is Result.COMPILED
    slots = {s.proposition: s for s in output.slots}

    def fail(what: str, key: str | None, want: Any, actual: Any) -> None:
        failures.append({"what": what, "key": key, "expected": want, "actual": actual})

    want = expected.get("decision_ready")
    if want is not None and output.decision_ready != want:
        fail("decision_ready", None, want, output.decision_ready)
    want = expected.get("blocking")
    if want is not None and sorted(set(want)) != sorted(output.blocking):
        fail("blocking", None, sorted(set(want)), sorted(output.blocking))
    for key, flag in (expected.get("required") or {}).items():
        slot = slots.get(key)
        actual = slot.required if slot is not None else "missing"
        if actual != flag:
            fail("required", key, flag, actual)
    for key, ids in (expected.get("resource_ids") or {}).items():
        slot = slots.get(key)
        actual_ids = list(slot.resource_ids) if slot is not None else "missing"
        if actual_ids != list(ids):
            fail("resource_ids", key, list(ids), actual_ids)
    actual_sets = {
        "admitted": admitted_in(output) if compiled else set(),
        "rejected": {r["id"] for r in output.rejected},
    }
    for what, actual_set in actual_sets.items():
        want = expected.get(what)
        if want is not None and set(want) != actual_set:
            fail(what, None, sorted(set(want)), sorted(actual_set))
    return failures


def _signature(operator: str, args: Mapping[str, Any]) -> str:
    return json.dumps([operator, args], sort_keys=True)


def expectation_failures(
    rows: Sequence[Mapping[str, Any]], expectations: Iterable[VariantExpectation]
) -> list[dict[str, Any]]:
    """Variant expectations against a sweep's rows (`{"operator", "args", "name", "slots"}`);
    an expectation whose perturbation was not run fails with `actual` "not run"."""
    by_signature = {_signature(r["operator"], r["args"]): r for r in rows}
    failures = []
    for e in expectations:
        row = by_signature.get(_signature(e.operator, e.args))
        states = row["slots"] if row is not None else {e.proposition: "not run"}
        failures += [
            {**f, "perturbation": e.perturbation.name}
            for f in slot_failures(states, {e.proposition: e.state})
        ]
    return failures


def missing_perturbations(
    suite: Sequence[Perturbation], expectations: Iterable[VariantExpectation]
) -> list[Perturbation]:
    """The perturbations the expectations name that the suite lacks, each once."""
    have = {_signature(p.operator, p.args) for p in suite}
    extra: dict[str, Perturbation] = {}
    for e in expectations:
        signature = _signature(e.operator, e.args)
        if signature not in have:
            extra.setdefault(signature, e.perturbation)
    return list(extra.values())
