"""The scenario half of the impact report: one scenario compiled, with every perturbation
of the standard suite, against the draft and the published contract, and what differs."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from compiler import InvalidInput
from compiler.models import Contract
from contracts.wording import PLAIN, Words
from scenarios import compiling
from scenarios.expectations import expected_document

from .sentences import admitted_text, failure_text, flip_text, scenario_summary
from .sweeps import Outcome, sweep, sweep_key

Failure = Mapping[str, Any]


def scenario_report(
    scenario: Any,
    draft: Contract,
    published: Contract | None,
    corpus: Any,
    weak: Sequence[str],
    *,
    hashes: Mapping[str, str],
    catalogue: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """`hashes`: the draft's and the published contract's sha256 and the corpus's;
    `catalogue`: the catalogue's authority tiers, which the contract probes judge by."""
    name = scenario.name
    request = scenario.request_document()
    entry = _empty_entry(name)
    variant_expectations = list(scenario.variant_expectations or [])
    try:
        document, draft_base, after, draft_variant_failures = sweep(
            request,
            draft,
            corpus,
            weak,
            catalogue=catalogue,
            key=sweep_key(
                request, hashes["draft"], hashes["corpus"], weak, catalogue,
                variant_expectations,
            ),
            expectations=variant_expectations,
        )  # fmt: skip
    except InvalidInput as exc:
        return _cannot_compile(entry, exc)
    entry["input_sha256"] = compiling.input_sha256(document)
    entry["compiles"] = len(after)
    draft_failures = _failures(scenario, draft_base, draft_variant_failures)
    before: dict[str, Outcome] = {}
    published_failures: list[dict[str, Any]] = []
    if published is not None:
        before, published_failures = _published_side(
            scenario, request, published, corpus, weak, hashes, catalogue, variant_expectations
        )
    entry["flips"] = _flips(name, after, before)
    entry["admitted_changes"] = _admitted_changes(name, after, before)
    entry["verdicts"] = _verdicts(after, before, has_published=published is not None)
    entry.update(
        _expectation_changes(name, draft_failures, published_failures, published is not None)
    )
    entry["summary"] = scenario_summary(name, entry, len(after))
    entry["changed"] = bool(
        entry["flips"]
        or entry["admitted_changes"]
        or entry["newly_failing"]
        or entry["now_passing"]
        or entry["problems"]
    )
    return entry


def _empty_entry(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "input_sha256": None,
        "compiles": 0,
        "flips": [],
        "admitted_changes": [],
        "newly_failing": [],
        "now_passing": [],
        "still_failing": 0,
        "problems": [],
        "verdicts": [],
    }


def _cannot_compile(entry: dict[str, Any], exc: InvalidInput) -> dict[str, Any]:
    entry["problems"] = [problem_text(entry["name"], e["msg"]) for e in exc.errors]
    entry["summary"] = []
    entry["changed"] = True
    return entry


def problem_text(name: str, message: str, words: Words = PLAIN) -> str:
    return words.say(
        "{name} cannot be compiled against this version: {message}",
        name=words.name(name), message=words.text(message),
    )  # fmt: skip


def _failures(
    scenario: Any, base: Any, variant_failures: Sequence[Failure]
) -> list[dict[str, Any]]:
    """The base's failed expectations, then the failed per-perturbation ones (each naming its
    `perturbation`), as the runner reports them (scenarios.result_rows)."""
    failures = compiling.expectation_failures(
        base.output, base.document, expected_document(scenario)
    )
    return [*failures, *(dict(f) for f in variant_failures)]


def _published_side(
    scenario: Any,
    request: Mapping[str, Any],
    published: Contract,
    corpus: Any,
    weak: Sequence[str],
    hashes: Mapping[str, str],
    catalogue: Mapping[str, int] | None,
    variant_expectations: Sequence[Any],
) -> tuple[dict[str, Outcome], list[dict[str, Any]]]:
    """The published contract's outcomes and failed expectations; none when the scenario
    cannot be compiled against it."""
    try:
        _, published_base, before, variant_failures = sweep(
            request,
            published,
            corpus,
            weak,
            catalogue=catalogue,
            key=sweep_key(
                request, hashes["published"], hashes["corpus"], weak, catalogue,
                variant_expectations,
            ),
            expectations=variant_expectations,
        )  # fmt: skip
        return before, _failures(scenario, published_base, variant_failures)
    except InvalidInput:
        return {}, []


def _paired(
    after: Mapping[str, Outcome], before: Mapping[str, Outcome]
) -> Iterator[tuple[str, Outcome, Outcome]]:
    """Each perturbation compiled against both contracts, matched by name."""
    for perturbation, outcome in after.items():
        previous = before.get(perturbation)
        if previous is not None:
            yield perturbation, outcome, previous


def _flips(
    name: str, after: Mapping[str, Outcome], before: Mapping[str, Outcome]
) -> list[dict[str, Any]]:
    """Slots whose state differs, matched by perturbation name."""
    flips = []
    for perturbation, outcome, previous in _paired(after, before):
        for key in sorted(set(outcome.states) | set(previous.states)):
            old = previous.states.get(key, "missing")
            new = outcome.states.get(key, "missing")
            if old != new:
                flips.append(
                    {
                        "perturbation": perturbation,
                        "proposition": key,
                        "before": old,
                        "after": new,
                        "text": flip_text(name, perturbation, key, old, new),
                    }
                )
    return flips


def _admitted_changes(
    name: str, after: Mapping[str, Outcome], before: Mapping[str, Outcome]
) -> list[dict[str, Any]]:
    """Candidates that enter or leave the admitted set, per perturbation."""
    changes = []
    for perturbation, outcome, previous in _paired(after, before):
        added = sorted(outcome.admitted - previous.admitted)
        removed = sorted(previous.admitted - outcome.admitted)
        if added or removed:
            changes.append(
                {
                    "perturbation": perturbation,
                    "operator": outcome.operator,
                    "added": added,
                    "removed": removed,
                    "text": admitted_text(name, perturbation, added, removed),
                }
            )
    return changes


def _verdicts(
    after: Mapping[str, Outcome], before: Mapping[str, Outcome], *, has_published: bool
) -> list[dict[str, Any]]:
    """The draft's violations and findings, each marked `new` unless the published contract
    gives the same kind of verdict on the same slot under the same perturbation (without a
    published contract, every one is new)."""
    verdicts = []
    for perturbation, outcome in after.items():
        previous = before.get(perturbation)
        seen = (
            {(v["proposition"], v["kind"]) for v in previous.verdicts}
            if previous is not None
            else set()
        )
        for v in outcome.verdicts:
            verdicts.append({
                "perturbation": perturbation,
                "operator": outcome.operator,
                "label": outcome.label or perturbation,
                "proposition": v["proposition"],
                # What the verdict is about beyond its operator and proposition, with no item
                # ids (compiler.relations.Verdict.cause); "" when a verdict carries none.
                "cause": v.get("cause") or "",
                "kind": v["kind"],
                "message": v["message"],
                "items": list(v["items"]),
                "new": not has_published or (v["proposition"], v["kind"]) not in seen,
            })  # fmt: skip
    return verdicts


def _identity(failure: Failure) -> tuple[str, str, str]:
    return (failure["what"], failure["key"], failure.get("perturbation") or "")


def _expectation_changes(
    name: str,
    draft_failures: list[dict[str, Any]],
    published_failures: list[dict[str, Any]],
    has_published: bool,
) -> dict[str, Any]:
    """Base expectations that newly fail or now pass; without a published contract, every
    failure is new."""
    if not has_published:
        return {
            "newly_failing": [
                {**f, "text": failure_text(name, f, newly=True)} for f in draft_failures
            ]
        }
    old_failing = {_identity(f) for f in published_failures}
    new_failing = {_identity(f) for f in draft_failures}
    return {
        "newly_failing": [
            {**f, "text": failure_text(name, f, newly=True)}
            for f in draft_failures
            if _identity(f) not in old_failing
        ],
        "now_passing": [
            {**f, "text": failure_text(name, f, newly=False)}
            for f in published_failures
            if _identity(f) not in new_failing
        ],
        "still_failing": len(new_failing & old_failing),
    }
