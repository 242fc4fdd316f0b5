"""The rows a suite run stores: one per compile (a scenario's base and each perturbation),
built from the runner's sweeps (`scenarios.compiling`); the runner writes them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import orjson

from compiler import InvalidInput

from . import compiling
from .expectations import expected_document
from .models import Corpus, CorpusCandidate, Scenario, SuiteRun


def _corpus_models(ids: set[int]) -> dict[int, compiling.CorpusModels]:
    directories = dict(Corpus.objects.filter(pk__in=ids).values_list("pk", "directory"))
    rows: dict[int, list[dict[str, Any]]] = {pk: [] for pk in ids}
    candidates = CorpusCandidate.objects.live().filter(corpus_id__in=ids).order_by("position", "id")
    for corpus_id, data in candidates.values_list("corpus_id", "data"):
        rows[corpus_id].append(data)
    return {pk: compiling.CorpusModels.build(directories[pk], rows[pk]) for pk in ids}


def json_text(value: Any) -> str:
    """A JSON column's value as a run stores it: orjson's text (the same documents as
    `json.dumps` gives, without its spaces, and several times faster on the thousands of
    small ones a run writes). SQLite stores it as it is; PostgreSQL's jsonb parses it. The
    same value always gives the same text, which the run's group tallies rely on."""
    return orjson.dumps(value).decode()


# Result positions a scenario may use: scenario i's rows are at i * POSITION_STRIDE and on,
# so chunks compiled apart (in any order, by any worker) number their rows as one run would;
# a scenario gives at most this many rows (the runner refuses more).
POSITION_STRIDE = 1000

# A result row as `_insert_results` takes it: the model's attnames, with these defaults.
ROW_DEFAULTS: dict[str, Any] = {
    "perturbation": "",
    "perturbation_args": None,
    "plan_id": "",
    "flips": None,
    "verdicts": None,
    "verdict_counts": None,
    "expectation_failures": [],
    "output_json": "",  # a variant's: compiled again when opened (scenarios.replay)
    "input_json": None,
}


def verdict_counts(verdicts: Sequence[dict[str, Any]]) -> dict[str, dict[str, int]] | None:
    """A variant's verdicts counted per proposition ("" for the variant as a whole) and kind,
    keys sorted (the stored `ScenarioResult.verdict_counts`); None without verdicts."""
    if not verdicts:
        return None
    counts: dict[str, dict[str, int]] = {}
    for verdict in verdicts:
        kinds = counts.get(verdict["proposition"] or "")
        if kinds is None:
            kinds = counts[verdict["proposition"] or ""] = {}
        kind = verdict["kind"]
        kinds[kind] = kinds.get(kind, 0) + 1
    # Mostly one kind per proposition: nothing to sort.
    return {
        key: kinds if len(kinds) == 1 else dict(sorted(kinds.items()))
        for key, kinds in sorted(counts.items())
    }


# A chunk's sweeps by what they depend on besides the run (`sweep_memo_key`): scenarios with
# the same request, corpus and per-perturbation expectations compile alike (the compiler is
# deterministic), so such a scenario is swept once per chunk. Its rows keep the first
# sweep's compile times.
SweepMemo = dict[str, tuple[compiling.Sweep, str, str]]


def sweep_memo_key(scenario: Scenario) -> str:
    return json_text(
        [scenario.request_document(), scenario.corpus_id, scenario.variant_expectations]
    )


def _scenario_rows(
    run: SuiteRun,
    scenario: Scenario,
    contract: Any,
    corpus: compiling.CorpusModels,
    position: int,
    memo: SweepMemo | None = None,
) -> list[dict[str, Any]]:
    """The result rows of one scenario: its base first, then each perturbation."""
    common: dict[str, Any] = {
        "run_id": run.pk,
        "scenario_id": scenario.pk,
        "scenario_name": scenario.name,
    }
    key = sweep_memo_key(scenario) if memo is not None else ""
    remembered = memo.get(key) if memo is not None else None
    if remembered is None:
        try:
            document = compiling.scenario_input(scenario.request_document(), contract, corpus)
        except InvalidInput as exc:
            # A scenario the compiler cannot read fails its expectations; no perturbations.
            return [common | _invalid_row(exc, position)]
        swept = compiling.sweep_scenario(
            document, run.weak_classes, keep_models=False, catalogue=run.catalogue,
            expectations=scenario.variant_expectations,
        )  # fmt: skip
        base_input = compiling.input_json(swept.base.document, corpus)
        remembered = (swept, base_input, compiling.text_sha256(base_input))
        if memo is not None:
            memo[key] = remembered
    swept, base_input, base_sha256 = remembered
    base = swept.base
    rows = [common | _base_row(scenario, base, base_sha256, position)]
    rows[0]["input_json"] = base_input
    # A failed expectation on one perturbation is reported with the base's: one list a
    # scenario fails by, each such failure naming its perturbation.
    rows[0]["expectation_failures"] += swept.expectation_failures
    for offset, variant in enumerate(swept.variants, start=1):
        assert variant.perturbation is not None  # only the base has none
        rows.append(
            common
            | {
                "position": position + offset,
                "perturbation": variant.name,
                "perturbation_args": variant.perturbation,
                "input_sha256": compiling.variant_sha256(base_sha256, variant.perturbation),
                "result": variant.result,
                "plan_id": variant.plan_id,
                "duration_ms": variant.duration_ms,
                "slot_states": variant.slot_states,
                "flips": variant.flips,
                "verdicts": variant.verdicts,
                "verdict_counts": verdict_counts(variant.verdicts),
            }
        )
    return rows


def _invalid_row(exc: InvalidInput, position: int) -> dict[str, Any]:
    """The one row of a scenario whose input the compiler refuses: one `input` failure per
    problem."""
    return {
        "position": position,
        "input_sha256": "",
        "result": "invalid",
        "duration_ms": 0.0,
        "output_json": _json(exc.to_json()),
        "slot_states": {},
        "expectation_failures": [
            {"what": "input", "key": _where(e["loc"]), "expected": "valid", "actual": e["msg"]}
            for e in exc.errors
        ],
    }


def _base_row(
    scenario: Scenario, base: compiling.BaseCompile, base_sha256: str, position: int
) -> dict[str, Any]:
    """The scenario's base compile, checked against its expectations."""
    return {
        "position": position,
        "input_sha256": base_sha256,
        "result": base.result,
        "plan_id": base.plan_id,
        "duration_ms": base.duration_ms,
        "output_json": base.output_json,
        "slot_states": base.slot_states,
        "expectation_failures": compiling.expectation_failures(
            base.output, base.document, expected_document(scenario)
        ),
    }


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _where(loc: Sequence[Any]) -> str:
    return ".".join(str(part) for part in loc)
