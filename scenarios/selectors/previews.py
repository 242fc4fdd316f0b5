"""A scenario compiled now, against any version: its input, the preview of "take the current
result as expected", and the three-way comparison."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from compiler import CompileInput, CompileOutput, compare, compile_input
from contracts.documents import compiled_contract
from contracts.models import ContractVersion
from scenarios import compiling, expectations
from scenarios.models import Scenario


def scenario_document(*, scenario: Scenario, version: ContractVersion) -> CompileInput:
    """The scenario's compile input against `version` (`InvalidInput` if it has none)."""
    corpus = scenario.corpus
    models = compiling.CorpusModels.build(
        corpus.directory,
        corpus.candidates.live().order_by("position", "id").values_list("data", flat=True),
    )
    return compiling.scenario_input(scenario.request_document(), compiled_contract(version), models)


def compile_scenario(
    *, scenario: Scenario, version: ContractVersion
) -> tuple[CompileInput, CompileOutput]:
    document = scenario_document(scenario=scenario, version=version)
    return document, compile_input(document)


@dataclass(frozen=True)
class ExpectationChange:
    # slot | admitted | rejected | decision_ready | blocking | required | resource_ids
    field: str
    key: str  # the proposition of a slot, `required` or resource ids change; else the field
    before: Any  # None: not checked
    after: Any

    @property
    def proposition(self) -> str | None:
        return self.key if self.field in ("slot", "required", "resource_ids") else None

    @property
    def what(self) -> str:
        """The change's subject in words (after the proposition, when there is one)."""
        return CHANGE_WORDS[self.field]

    @property
    def before_text(self) -> str:
        return _words(self.field, self.before)

    @property
    def after_text(self) -> str:
        return _words(self.field, self.after)


CHANGE_WORDS = {
    "slot": "",
    "admitted": "admitted ids",
    "rejected": "rejected ids",
    "decision_ready": "decision ready",
    "blocking": "blocking propositions",
    "required": "required",
    "resource_ids": "resource ids",
}


def _words(field: str, value: Any) -> str:
    if value is None:
        return "not checked"
    if field == "decision_ready":
        return "ready" if value else "not ready"
    if field == "required":
        return "required" if value else "optional"
    if isinstance(value, list):
        return ", ".join(value) or "nothing"
    return str(value)


@dataclass(frozen=True)
class ExpectationPreview:
    version: ContractVersion
    output: CompileOutput
    expectations: dict[str, Any]
    changes: list[ExpectationChange]


def expectation_preview(*, scenario: Scenario, version: ContractVersion) -> ExpectationPreview:
    """What "take the current result as expected" would change, compiled now against `version`
    (`expectations.taken`: the slots, and each other check the scenario makes)."""
    document, output = compile_scenario(scenario=scenario, version=version)
    states = compiling.slot_states(output, document)
    result = compiling.expectations_from(output, states)
    after = expectations.taken(scenario, result)
    changes = []
    wanted = after["expected_slots"]
    for key in [*wanted, *(k for k in scenario.expected_slots if k not in wanted)]:
        before, now = scenario.expected_slots.get(key), wanted.get(key)
        if before != now:
            changes.append(ExpectationChange("slot", key, before, now))
    for name in ("admitted", "rejected", "decision_ready", "blocking"):
        before = getattr(scenario, f"expected_{name}")
        now = after[f"expected_{name}"]
        if isinstance(before, list):
            before = sorted(before)
        if before is not None and before != now:
            changes.append(ExpectationChange(name, name, before, now))
    for name in ("required", "resource_ids"):
        pinned, now = getattr(scenario, f"expected_{name}") or {}, after[f"expected_{name}"]
        for key, before in pinned.items():
            if now.get(key) != before:
                changes.append(ExpectationChange(name, key, before, now.get(key)))
    return ExpectationPreview(version, output, result, changes)


@dataclass(frozen=True)
class Comparison:
    top_k: int
    rows: list[dict[str, Any]]  # one per strategy, with ids and unsafe ids
    reasons: dict[str, str]  # why each unsafe item would fail admission


COMPARISON_LABELS = {
    "plain_top_k": "Plain top-k",
    "post_filter_top_k": "Post-filtered top-k",
    "compiled": "Compiled",
}


def comparison(*, scenario: Scenario, version: ContractVersion, top_k: int) -> Comparison:
    """The seed's three-way comparison for one scenario: ids and reason codes, never content."""
    document, output = compile_scenario(scenario=scenario, version=version)
    result = compare(document, top_k)
    reasons = {
        r["id"]: r["reason"] + (f" ({r['detail']})" if r.get("detail") else "")
        for r in output.rejected
    }
    rows = [{"key": key, "label": COMPARISON_LABELS[key], **result[key]} for key in result]
    return Comparison(top_k=top_k, rows=rows, reasons=reasons)
