"""Runs as plain JSON: one run's report, and two runs of the suite compared."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from scenarios.models import ScenarioResult, SuiteRun


def run_report(*, run: SuiteRun) -> dict[str, Any]:
    """The run's summary, every expectation failure and every flip, as plain JSON: what
    `run_scenarios --json` prints and what a review can keep."""
    return {**_report_head(run), "failures": list(_failures(run)), "flips": list(_flips(run))}


def run_report_stream(*, run: SuiteRun) -> Iterator[str]:
    """`run_report` as JSON text, piece by piece: the rows are read in batches and written
    as they come, so a 100,000-compile run's report never sits whole in memory."""
    head = json.dumps(_report_head(run), indent=2)
    yield head[: head.rindex("}")].rstrip() + ',\n  "failures": ['
    for key, items in (("failures", _failures(run)), ("flips", _flips(run))):
        if key == "flips":
            yield '],\n  "flips": ['
        for index, item in enumerate(items):
            yield ("," if index else "") + "\n    " + json.dumps(item)
    yield "]\n}\n"


def _report_head(run: SuiteRun) -> dict[str, Any]:
    return {
        "decision_type": run.decision_type.key,
        "version": run.version.number,
        "run": run.pk,
        "status": run.status,
        "error": run.error or None,
        "contract_sha256": run.contract_sha256,
        "summary": run.summary,
    }


def _failures(run: SuiteRun) -> Iterator[dict[str, Any]]:
    rows = run.results.exclude(expectation_failures=[]).order_by("position")
    for name, failures in rows.values_list("scenario_name", "expectation_failures").iterator():
        for failure in failures:
            yield {"scenario": name, **failure}


def _flips(run: SuiteRun) -> Iterator[dict[str, Any]]:
    rows = run.results.filter(flips__isnull=False).order_by("position")
    for name, perturbation, flips in rows.values_list(
        "scenario_name", "perturbation", "flips"
    ).iterator(chunk_size=2000):
        for flip in flips.get("slots", []):
            yield {"scenario": name, "perturbation": perturbation, **flip}


def run_comparison(*, before: SuiteRun, after: SuiteRun) -> dict[str, Any]:
    """Two runs of the same suite side by side (e.g. the published version, then the draft):
    every (scenario, perturbation) row whose slot states or result differ, matched by scenario
    and perturbation name, and the rows only one of the runs has. Two queries."""

    def rows(run: SuiteRun) -> dict[tuple[int | None, str], ScenarioResult]:
        results = run.results.only(
            "scenario_id", "scenario_name", "perturbation", "result", "slot_states", "position"
        ).order_by("position")
        return {(r.scenario_id, r.perturbation): r for r in results}

    old, new = rows(before), rows(after)
    changed = []
    for key, now in new.items():
        was = old.get(key)
        if was is None:
            continue
        propositions = list(dict.fromkeys([*was.slot_states, *now.slot_states]))
        for proposition in propositions:
            a, b = was.slot_states.get(proposition), now.slot_states.get(proposition)
            if a != b:
                changed.append(
                    {
                        "scenario": now.scenario_name,
                        "perturbation": now.perturbation,
                        "proposition": proposition,
                        "before": a,
                        "after": b,
                        "before_result": was.pk,
                        "after_result": now.pk,
                    }
                )
    only = lambda these, others: [  # noqa: E731
        {"scenario": r.scenario_name, "perturbation": r.perturbation}
        for k, r in these.items()
        if k not in others
    ]
    return {
        "before": {"run": before.pk, "version": before.version.number},
        "after": {"run": after.pk, "version": after.version.number},
        "changed": changed,
        "only_before": only(old, new),
        "only_after": only(new, old),
        "totals": {
            "rows_compared": len(set(old) & set(new)),
            "changed_slots": len(changed),
            "changed_rows": len({(c["scenario"], c["perturbation"]) for c in changed}),
        },
    }
