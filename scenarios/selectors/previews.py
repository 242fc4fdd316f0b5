"""A scenario compiled now, against any version: its input, the preview of "take the current
result as expected", and the three-way comparison."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from compiler import CompileInput, CompileOutput, compile_input
from compiler.compare import compare
from contracts.documents import compiled_contract
from contracts.models import ContractVersion
from scenarios import compiling
from scenarios.models import Scenario


def scenario_document(*, scenario: Scenario, version: ContractVersion) -> CompileInput:
    """The scenario's compile input against `version` (`InvalidInput` if it has none)."""
    corpus = scenario.corpus
    models = compiling.CorpusModels.build(
        corpus.directory,
        corpus.candidates.order_by("position", "id").values_list("data", flat=True),
    )
    return compiling.scenario_input(scenario.request_document(), compiled_contract(version), models)


def compile_scenario(
    *, scenario: Scenario, version: ContractVersion
) -> tuple[CompileInput, CompileOutput]:
    document = scenario_document(scenario=scenario, version=version)
    return document, compile_input(document)


@dataclass(frozen=True)
class ExpectationChange:
    field: str  # slot | admitted | rejected
    key: str
    before: Any
    after: Any


@dataclass(frozen=True)
class ExpectationPreview:
    version: ContractVersion
    output: CompileOutput
    expectations: dict[str, Any]
    changes: list[ExpectationChange]


def expectation_preview(*, scenario: Scenario, version: ContractVersion) -> ExpectationPreview:
    """What "take the current result as expected" would change, compiled now against `version`."""
    document, output = compile_scenario(scenario=scenario, version=version)
    states = compiling.slot_states(output, document)
    expectations = compiling.expectations_from(output, states)
    changes = []
    wanted = expectations["expected_slots"]
    for key in [*wanted, *(k for k in scenario.expected_slots if k not in wanted)]:
        before, after = scenario.expected_slots.get(key), wanted.get(key)
        if before != after:
            changes.append(ExpectationChange("slot", key, before, after))
    for name in ("admitted", "rejected"):
        before = getattr(scenario, f"expected_{name}")
        after = expectations[f"expected_{name}"]
        if before is not None and sorted(before) != after:
            changes.append(ExpectationChange(name, name, sorted(before), after))
    return ExpectationPreview(version, output, expectations, changes)


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
