"""A suite run stores what the compiler produces: every stored row of a run, compared with the
same scenario compiled here straight through the compiler, with no workbench code between."""

from __future__ import annotations

import hashlib
import json

from compiler import Perturbation, compile_input, load_input, sweep
from contracts.documents import compiled_contract, compiler_json, document_sha256
from scenarios import selectors, services


def test_a_run_stores_exactly_what_the_compiler_produces(owner, draft, corpus, scenario):
    run = services.run_start(actor=owner, version=draft, background=False)
    contract = compiler_json(compiled_contract(draft))
    document = load_input(
        {
            "request": scenario.request_document(),
            "contract": contract,
            "directory": corpus.directory,
            "candidates": [c.data for c in corpus.candidates.order_by("position", "id")],
        }
    )
    report = sweep(document, weak_classes=run.weak_classes, catalogue=run.catalogue)
    base, *variants = run.results.order_by("position")

    assert run.contract_sha256 == document_sha256(contract)
    assert base.perturbation == "" and base.flips is None
    assert base.output == compile_input(document).to_json()
    assert base.input_sha256 == hashlib.sha256(document.model_dump_json().encode()).hexdigest()
    assert load_input(json.loads(base.input_json)) == document
    assert (base.result, base.slot_states) == (report["base"]["result"], report["base"]["slots"])
    assert base.plan_id == report["base"]["plan_id"]
    assert base.expectation_failures == report["expectation_failures"] == []

    assert [v.perturbation for v in variants] == [p["name"] for p in report["perturbations"]]
    for row, expected in zip(variants, report["perturbations"], strict=True):
        perturbation = Perturbation.from_json(expected)
        assert row.perturbation_args == perturbation.to_json()
        # Not stored: compiled again from the base's stored input when opened.
        assert row.output_json == "" and row.input_json is None
        output = selectors.packet_view(row).output
        assert output == compile_input(perturbation.apply(document)).to_json()
        assert (row.result, row.plan_id) == (expected["result"], output["plan_id"] or "")
        assert row.slot_states == expected["slots"]
        assert row.flips == {
            **expected["flips"],
            "label": expected["label"],
            "verdict": expected["verdict"],
        }
        assert row.verdicts == row.judged == expected["verdicts"]
        assert row.expectation_failures == []
    assert len({r.input_sha256 for r in [base, *variants]}) == 1 + len(variants)
    assert run.summary["compiles"] == 1 + report["totals"]["perturbations"]
    assert run.summary["flipped_slots"] == report["totals"]["flipped_slots"]


def test_scenarios_with_the_same_input_are_swept_once_and_judged_each_by_its_own(
    owner, draft, scenario, scenario_fields, monkeypatch
):
    from scenarios import compiling

    # The same request and corpus as `scenario`, but expectations it does not meet.
    services.scenario_create(
        actor=owner,
        decision_type=scenario.decision_type,
        corpus=scenario.corpus,
        name="the same request, other expectations",
        **scenario_fields(expected_slots={"facility_limit": "unknown"}),
    )
    swept = []
    real = compiling.sweep_scenario
    monkeypatch.setattr(
        compiling, "sweep_scenario", lambda *a, **k: swept.append(1) or real(*a, **k)
    )
    run = services.run_start(actor=owner, version=draft, background=False)

    assert len(swept) == 1
    bases = {r.scenario_name: r for r in run.results.filter(perturbation="")}
    same, other = bases[scenario.name], bases["the same request, other expectations"]
    assert (same.input_sha256, same.plan_id) == (other.input_sha256, other.plan_id)
    assert same.expectation_failures == [] and other.expectation_failures != []
    rows = {name: run.results.filter(scenario_name=name).count() for name in bases}
    assert rows[scenario.name] == rows[other.scenario_name] > 1
