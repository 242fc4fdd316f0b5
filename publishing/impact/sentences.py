"""The words the impact report is written in: states, lists of names, where a change
happens, failed expectations, per-scenario summaries and the headline."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from contracts.models import ContractVersion

from .sweeps import BASE

STATE_WORDS = {
    "supported": "supported",
    "contradicted": "contradicted (sources disagree)",
    "unknown": "unknown (no admissible evidence)",
    "refused": "refused (the compiler would not compile)",
    "missing": "missing",
}


def state(word: str) -> str:
    return STATE_WORDS.get(word, word)


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def names(items: Sequence[str]) -> str:
    quoted = [f"'{item}'" for item in items]
    if len(quoted) <= 1:
        return "".join(quoted) or "nothing"
    return ", ".join(quoted[:-1]) + " and " + quoted[-1]


def where(name: str, perturbation: str) -> str:
    return f"'{name}'" if perturbation == BASE else f"'{name}' under {perturbation}"


def flip_text(name: str, perturbation: str, key: str, old: str, new: str) -> str:
    if old == "missing":
        return f"In {where(name, perturbation)}, the new '{key}' is {state(new)}."
    if new == "missing":
        return (
            f"In {where(name, perturbation)}, '{key}' (was "
            f"{state(old)}) is no longer part of the contract."
        )
    return f"In {where(name, perturbation)}, '{key}' goes from {state(old)} to {state(new)}."


def admitted_text(name: str, perturbation: str, added: list[str], removed: list[str]) -> str:
    parts = []
    if added:
        parts.append(f"would now admit {names(added)}")
    if removed:
        parts.append(f"would no longer admit {names(removed)}")
    return f"In {where(name, perturbation)}, the compiler " + " and ".join(parts) + "."


def failure_text(name: str, failure: Mapping[str, Any], *, newly: bool) -> str:
    lead = f"'{name}' no longer meets" if newly else f"'{name}' now meets"
    if failure["what"] == "slot":
        expected = state(failure["expected"])
        actual = state(failure["actual"])
        if newly:
            return (
                f"{lead} its expectation for '{failure['key']}': expected {expected}, "
                f"it would be {actual}."
            )
        return f"{lead} its expectation for '{failure['key']}' ({expected})."
    if failure["what"] in PIN_SENTENCES:
        return PIN_SENTENCES[failure["what"]](lead, failure, newly)
    if failure["what"] in ("admitted", "rejected"):
        what = failure["what"]
        expected_set, actual_set = set(failure["expected"]), set(failure["actual"])
        details = []
        if actual_set - expected_set:
            details.append(f"{names(sorted(actual_set - expected_set))} would be {what} too")
        if expected_set - actual_set:
            details.append(f"{names(sorted(expected_set - actual_set))} would not be {what}")
        detail = f" ({'; '.join(details)})" if details and newly else ""
        return f"{lead} its expectation of exactly which items are {what}{detail}."
    return f"{lead} its expectation: {failure['key']} {failure['actual']}."


def _ready_text(lead: str, failure: Mapping[str, Any], newly: bool) -> str:
    expected = "ready" if failure["expected"] else "not ready"
    actual = "be ready" if failure["actual"] else "not be ready"
    tail = f" (it would {actual})" if newly else ""
    return f"{lead} its expectation that the decision is {expected}{tail}."


def _required_text(lead: str, failure: Mapping[str, Any], newly: bool) -> str:
    expected = "required" if failure["expected"] else "optional"
    actual = failure["actual"]
    now = ("required" if actual else "optional") if isinstance(actual, bool) else "missing"
    tail = f" (it would be {now})" if newly else ""
    return f"{lead} its expectation that '{failure['key']}' is {expected}{tail}."


def _resources_text(lead: str, failure: Mapping[str, Any], newly: bool) -> str:
    expected = names(list(failure["expected"] or ()))
    actual = failure["actual"]
    now = names(list(actual)) if isinstance(actual, list | tuple) else "no such slot"
    tail = f" (it would rest on {now})" if newly else ""
    return f"{lead} its expectation that '{failure['key']}' rests on {expected}, in order{tail}."


def _blocking_text(lead: str, failure: Mapping[str, Any], newly: bool) -> str:
    expected, actual = set(failure["expected"] or ()), set(failure["actual"] or ())
    details = []
    if actual - expected:
        details.append(f"{names(sorted(actual - expected))} would block it too")
    if expected - actual:
        details.append(f"{names(sorted(expected - actual))} would no longer block it")
    detail = f" ({'; '.join(details)})" if details and newly else ""
    return f"{lead} its expectation of exactly which propositions block the decision{detail}."


# The pins on the decision and on a slot's meaning (`scenarios.expectations`).
PIN_SENTENCES = {
    "decision_ready": _ready_text,
    "blocking": _blocking_text,
    "required": _required_text,
    "resource_ids": _resources_text,
}


def variants(perturbations: Sequence[str], total: int) -> str:
    """'in the base case and under 9 of its 12 variations' and the like."""
    base = BASE in perturbations
    others = [p for p in perturbations if p != BASE]
    parts = []
    if base:
        parts.append("in the scenario as written")
    if others:
        of = f"{len(others)} of its {total - 1} variations" if total > 1 else "its variations"
        parts.append(f"under {of} ({', '.join(others)})")
    return " and ".join(parts)


def scenario_summary(name: str, entry: Mapping[str, Any], total: int) -> list[str]:
    """The scenario's changes grouped, one sentence per kind of change, for people who do
    not need every compile listed."""
    grouped: dict[tuple[str, str, str], list[str]] = {}
    for flip in entry["flips"]:
        key = (flip["proposition"], flip["before"], flip["after"])
        grouped.setdefault(key, []).append(flip["perturbation"])
    lines = [
        f"'{proposition}' goes from {state(old)} to {state(new)} {variants(at, total)}."
        for (proposition, old, new), at in grouped.items()
    ]
    moved: dict[tuple[tuple[str, ...], tuple[str, ...]], list[str]] = {}
    for change in entry["admitted_changes"]:
        moved.setdefault((tuple(change["added"]), tuple(change["removed"])), []).append(
            change["perturbation"]
        )
    for (added, removed), at in moved.items():
        parts = []
        if added:
            parts.append(f"admits {names(added)}")
        if removed:
            parts.append(f"no longer admits {names(removed)}")
        lines.append(f"The compiler {' and '.join(parts)} {variants(at, total)}.")
    return lines


def headline(
    version: ContractVersion, baseline: ContractVersion | None, summary: Mapping[str, int]
) -> list[str]:
    if baseline is None:
        lines = [
            f"Version {version.number} would be the first published contract of this "
            "decision type.",
        ]
    else:
        n = summary["contract_changes"]
        lines = [
            f"Version {version.number} compared with version {baseline.number}, the one in "
            f"use now: {n} change{'s' if n != 1 else ''} to the contract."
        ]
    lines.append(
        f"{summary['scenarios']} scenario(s) compiled with every perturbation of the standard "
        f"suite ({summary['compiles']} compiles): {summary['flipped_slots']} slot(s) change "
        f"state, {summary['admitted_changes']} compile(s) admit different evidence."
    )
    if summary["newly_failing"]:
        lines.append(
            f"{summary['newly_failing']} expectation(s) that hold today would fail with this "
            "version."
        )
    elif baseline is not None:
        lines.append("No expectation that holds today would fail with this version.")
    if summary["now_passing"]:
        lines.append(f"{summary['now_passing']} expectation(s) failing today would pass.")
    if summary["problems"]:
        lines.append(f"{summary['problems']} scenario(s) cannot be compiled against it.")
    return lines
