"""An owner's expectations on the variants of a scenario, and the one check of expected slots
that a base and a variant share.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from compiler.perturb import (
    Perturbation,
)


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
