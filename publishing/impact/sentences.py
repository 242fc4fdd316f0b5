"""The words the impact report is written in: states, lists of names, where a change
happens, failed expectations, per-scenario summaries and the headline."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from contracts.models import ContractVersion
from contracts.wording import PLAIN, Words

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


def names(items: Sequence[str], words: Words = PLAIN) -> str:
    return words.names(items)


def where(name: str, perturbation: str, words: Words = PLAIN) -> str:
    if perturbation == BASE:
        return words.name(name)
    return words.say("{name} under {perturbation}", name=words.name(name),
                     perturbation=words.text(perturbation))  # fmt: skip


def flip_text(
    name: str, perturbation: str, key: str, old: str, new: str, words: Words = PLAIN
) -> str:
    at, slot = where(name, perturbation, words), words.name(key)
    if old == "missing":
        return words.say("In {at}, the new {slot} is {new}.", at=at, slot=slot, new=state(new))
    if new == "missing":
        return words.say(
            "In {at}, {slot} (was {old}) is no longer part of the contract.",
            at=at, slot=slot, old=state(old),
        )  # fmt: skip
    return words.say(
        "In {at}, {slot} goes from {old} to {new}.", at=at, slot=slot, old=state(old),
        new=state(new),
    )  # fmt: skip


def admitted_clauses(
    added: Sequence[str], removed: Sequence[str], words: Words = PLAIN, *, would: bool = True
) -> str:
    """'would now admit 'a' and would no longer admit 'b'' (`would` False: 'admits …')."""
    now, no_longer = ("would now admit", "would no longer admit") if would else (
        "admits", "no longer admits")  # fmt: skip
    parts = []
    if added:
        parts.append(words.say("{verb} {names}", verb=now, names=words.names(added)))
    if removed:
        parts.append(words.say("{verb} {names}", verb=no_longer, names=words.names(removed)))
    return words.joined(parts, " and ")


def admitted_text(
    name: str, perturbation: str, added: list[str], removed: list[str], words: Words = PLAIN
) -> str:
    return words.say(
        "In {at}, the compiler {clauses}.", at=where(name, perturbation, words),
        clauses=admitted_clauses(added, removed, words),
    )  # fmt: skip


def failure_text(
    name: str, failure: Mapping[str, Any], *, newly: bool, words: Words = PLAIN
) -> str:
    lead = words.say(
        "{name} no longer meets" if newly else "{name} now meets", name=words.name(name)
    )
    if failure["what"] == "slot":
        expected = state(failure["expected"])
        actual = state(failure["actual"])
        slot = words.name(failure["key"])
        if failure.get("perturbation"):
            # A per-perturbation expectation (the scenario's `variant_expectations`).
            slot = words.say(
                "{slot} under {perturbation}", slot=slot,
                perturbation=words.name(failure["perturbation"]),
            )  # fmt: skip
        if newly:
            return words.say(
                "{lead} its expectation for {slot}: expected {expected}, it would be {actual}.",
                lead=lead, slot=slot, expected=expected, actual=actual,
            )  # fmt: skip
        return words.say(
            "{lead} its expectation for {slot} ({expected}).", lead=lead, slot=slot,
            expected=expected,
        )  # fmt: skip
    if failure["what"] in PIN_SENTENCES:
        return PIN_SENTENCES[failure["what"]](lead, failure, newly, words)
    if failure["what"] in ("admitted", "rejected"):
        what = failure["what"]
        expected_set, actual_set = set(failure["expected"]), set(failure["actual"])
        details = []
        if actual_set - expected_set:
            extra = words.names(sorted(actual_set - expected_set))
            details.append(words.say("{names} would be {what} too", names=extra, what=what))
        if expected_set - actual_set:
            lacking = words.names(sorted(expected_set - actual_set))
            details.append(words.say("{names} would not be {what}", names=lacking, what=what))
        return words.say(
            "{lead} its expectation of exactly which items are {what}{detail}.", lead=lead,
            what=what, detail=_detail(details, newly, words),
        )  # fmt: skip
    return words.say(
        "{lead} its expectation: {key} {actual}.", lead=lead, key=words.text(failure["key"]),
        actual=words.text(failure["actual"]),
    )  # fmt: skip


def _detail(details: list[Any], newly: bool, words: Words) -> str:
    """' (a; b)' after a failure that newly happens, nothing otherwise."""
    if not (details and newly):
        return ""
    return words.say(" ({details})", details=words.joined(details, "; "))


def _ready_text(lead: str, failure: Mapping[str, Any], newly: bool, words: Words) -> str:
    expected = "ready" if failure["expected"] else "not ready"
    actual = "be ready" if failure["actual"] else "not be ready"
    tail = f" (it would {actual})" if newly else ""
    return words.say(
        "{lead} its expectation that the decision is {expected}{tail}.", lead=lead,
        expected=expected, tail=tail,
    )  # fmt: skip


def _required_text(lead: str, failure: Mapping[str, Any], newly: bool, words: Words) -> str:
    expected = "required" if failure["expected"] else "optional"
    actual = failure["actual"]
    now = ("required" if actual else "optional") if isinstance(actual, bool) else "missing"
    tail = f" (it would be {now})" if newly else ""
    return words.say(
        "{lead} its expectation that {slot} is {expected}{tail}.", lead=lead,
        slot=words.name(failure["key"]), expected=expected, tail=tail,
    )  # fmt: skip


def _resources_text(lead: str, failure: Mapping[str, Any], newly: bool, words: Words) -> str:
    expected = words.names(list(failure["expected"] or ()))
    actual = failure["actual"]
    now = words.names(list(actual)) if isinstance(actual, list | tuple) else "no such slot"
    tail = words.say(" (it would rest on {now})", now=now) if newly else ""
    return words.say(
        "{lead} its expectation that {slot} rests on {expected}, in order{tail}.", lead=lead,
        slot=words.name(failure["key"]), expected=expected, tail=tail,
    )  # fmt: skip


def _blocking_text(lead: str, failure: Mapping[str, Any], newly: bool, words: Words) -> str:
    expected, actual = set(failure["expected"] or ()), set(failure["actual"] or ())
    details = []
    if actual - expected:
        details.append(words.say("{names} would block it too",
                                 names=words.names(sorted(actual - expected))))  # fmt: skip
    if expected - actual:
        details.append(words.say("{names} would no longer block it",
                                 names=words.names(sorted(expected - actual))))  # fmt: skip
    return words.say(
        "{lead} its expectation of exactly which propositions block the decision{detail}.",
        lead=lead, detail=_detail(details, newly, words),
    )  # fmt: skip


# The pins on the decision and on a slot's meaning (`scenarios.expectations`).
PIN_SENTENCES = {
    "decision_ready": _ready_text,
    "blocking": _blocking_text,
    "required": _required_text,
    "resource_ids": _resources_text,
}


def variants(perturbations: Sequence[str], total: int, words: Words = PLAIN) -> str:
    """'in the base case and under 9 of its 12 variations (…)' and the like (a perturbation's
    name may hold a candidate's id: each is isolated)."""
    base = BASE in perturbations
    others = [p for p in perturbations if p != BASE]
    parts = []
    if base:
        parts.append("in the scenario as written")
    if others:
        of = f"{len(others)} of its {total - 1} variations" if total > 1 else "its variations"
        named = words.joined((words.text(p) for p in others), ", ")
        parts.append(words.say("under {of} ({named})", of=of, named=named))
    return words.joined(parts, " and ")


def scenario_summary(
    name: str, entry: Mapping[str, Any], total: int, words: Words = PLAIN
) -> list[str]:
    """The scenario's changes grouped, one sentence per kind of change, for people who do
    not need every compile listed."""
    grouped: dict[tuple[str, str, str], list[str]] = {}
    for flip in entry["flips"]:
        key = (flip["proposition"], flip["before"], flip["after"])
        grouped.setdefault(key, []).append(flip["perturbation"])
    lines = [
        words.say(
            "{slot} goes from {old} to {new} {at}.",
            slot=words.name(proposition),
            old=state(old),
            new=state(new),
            at=variants(at, total, words),
        )  # fmt: skip
        for (proposition, old, new), at in grouped.items()
    ]
    moved: dict[tuple[tuple[str, ...], tuple[str, ...]], list[str]] = {}
    for change in entry["admitted_changes"]:
        moved.setdefault((tuple(change["added"]), tuple(change["removed"])), []).append(
            change["perturbation"]
        )
    for (added, removed), at in moved.items():
        lines.append(words.say(
            "The compiler {clauses} {at}.",
            clauses=admitted_clauses(added, removed, words, would=False),
            at=variants(at, total, words),
        ))  # fmt: skip
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


def cause_text(row: Mapping[str, Any], words: Words = PLAIN) -> str:
    """One cause of violations in a sentence: what breaks, how often and where, with the
    first occurrence as the example (its message names the items)."""
    first = row["occurrences"][0]
    about = words.name(row["proposition"]) if row["proposition"] else "the variant as a whole"
    cause = words.say(", {cause}", cause=words.text(row["cause"])) if row["cause"] else ""
    scenarios = row["scenarios"]
    shown = words.names(scenarios[:SCENARIOS_NAMED])
    if len(scenarios) > SCENARIOS_NAMED:
        shown = words.say(
            "{named} and {more} more",
            named=words.joined((words.name(s) for s in scenarios[:SCENARIOS_NAMED]), ", "),
            more=len(scenarios) - SCENARIOS_NAMED,
        )
    return words.say(
        "{operator} on {about}{cause}: {count} violation(s) in {total} scenario(s) ({shown}), "
        "e.g. {first}, {label} — {message}",
        operator=row["operator"], about=about, cause=cause, count=row["count"],
        total=len(scenarios), shown=shown, first=words.name(first["scenario"]),
        label=words.text(first["label"]), message=words.text(first["message"]),
    )  # fmt: skip


SCENARIOS_NAMED = 3
"""A cause's sentence names this many of its scenarios (the row lists them all)."""
