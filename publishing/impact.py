"""The impact report a reviewer reads before deciding: what a version changes.

Two halves, both written in plain sentences a non-engineer can follow:

* **the contract** — a structural diff of the version against the currently published one:
  propositions added or removed, accepted classes added, removed or reordered, blocking
  flags, `max_items`, descriptions, permitted purposes and the assembly policy;
* **the scenarios** — every scenario of the decision type, its base and each perturbation of
  the standard suite, compiled against both contracts: slots that flip, expectations that
  newly fail (or now pass), and candidates that enter or leave the admitted set.

The report is a plain JSON document (every sentence included), so its RFC 8785 sha256 —
what an approval records — covers exactly what the reviewer was shown. It holds no
timings and no clock: the same contracts, scenarios and compiler give the same hash.

Scenarios belong to the `scenarios` app. This module reads them through that app's public
pieces (`scenarios.compiling` for inputs, sweeps and expectations; `scenarios.services.
weak_classes`), compiling in memory rather than reusing stored runs: a stored run may predate
an edit of a scenario or a corpus, and the report must describe the suite as it is now.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from compiler import COMPILER_VERSION, InvalidInput
from compiler.canonical import sha256_hex
from compiler.models import Contract
from compiler.perturb import admitted_in
from contracts.documents import compiled_contract
from contracts.models import ContractVersion

FORMAT = "evidence-workbench.impact/1"
BASE = "base"

STATE_WORDS = {
    "supported": "supported",
    "contradicted": "contradicted (sources disagree)",
    "unknown": "unknown (no admissible evidence)",
    "refused": "refused (the compiler would not compile)",
    "missing": "missing",
}


@dataclass(frozen=True)
class ImpactReport:
    document: dict[str, Any]
    sha256: str

    @property
    def summary(self) -> dict[str, int]:
        return self.document["summary"]

    @property
    def headline(self) -> list[str]:
        return self.document["headline"]

    @property
    def contract_changes(self) -> list[dict[str, Any]]:
        return self.document["contract_changes"]

    @property
    def scenarios(self) -> list[dict[str, Any]]:
        return self.document["scenarios"]

    @property
    def changed_scenarios(self) -> list[dict[str, Any]]:
        return [s for s in self.scenarios if s["changed"]]


# --------------------------------------------------------------------------- the contract


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _names(items: Sequence[str]) -> str:
    quoted = [f"'{item}'" for item in items]
    if len(quoted) <= 1:
        return "".join(quoted) or "nothing"
    return ", ".join(quoted[:-1]) + " and " + quoted[-1]


def _change(kind: str, text: str, proposition: str | None = None) -> dict[str, Any]:
    return {"kind": kind, "proposition": proposition, "text": text}


def contract_changes(
    before: Mapping[str, Any] | None, after: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """What changes from `before` (the published contract) to `after`, as sentences."""
    if before is None:
        keys = [p["key"] for p in after["propositions"]]
        return [
            _change(
                "first_version",
                "Nothing has been published for this decision type yet, so everything in this "
                f"version is new: {len(keys)} proposition(s), {_names(keys)}.",
            )
        ]
    changes: list[dict[str, Any]] = []
    old = {p["key"]: p for p in before["propositions"]}
    new = {p["key"]: p for p in after["propositions"]}
    for key, proposition in new.items():
        if key not in old:
            classes = proposition["accepted_classes"]
            blocks = "a gap blocks the decision" if proposition["required"] else "optional"
            changes.append(
                _change(
                    "proposition_added",
                    f"Adds the fact '{key}', established by {_names(classes)} "
                    f"(in that order of preference; {blocks}).",
                    key,
                )
            )
    for key in old:
        if key not in new:
            changes.append(
                _change(
                    "proposition_removed",
                    f"Removes the fact '{key}': packets will no longer have a slot for it.",
                    key,
                )
            )
    for key, proposition in new.items():
        if key in old:
            changes += _proposition_changes(old[key], proposition)
    common_old = [k for k in old if k in new]
    common_new = [k for k in new if k in old]
    if common_old != common_new:
        changes.append(
            _change(
                "proposition_order",
                "Changes the order in which facts are filled when the budget is tight: "
                f"now {_names(common_new)} (was {_names(common_old)}).",
            )
        )
    changes += _purpose_changes(before.get("purposes", []), after.get("purposes", []))
    changes += _policy_changes(before.get("policy", {}), after.get("policy", {}))
    return changes


def _proposition_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[dict[str, Any]]:
    key = new["key"]
    changes = []
    before, after = list(old["accepted_classes"]), list(new["accepted_classes"])
    added = [c for c in after if c not in before]
    removed = [c for c in before if c not in after]
    for name in added:
        changes.append(
            _change(
                "class_added",
                f"'{key}' may now be established by '{name}' "
                f"(its {_ordinal(after.index(name) + 1)} choice of {len(after)}).",
                key,
            )
        )
    for name in removed:
        changes.append(
            _change(
                "class_removed",
                f"'{key}' can no longer be established by '{name}'.",
                key,
            )
        )
    kept_before = [c for c in before if c in after]
    kept_after = [c for c in after if c in before]
    if kept_before != kept_after:
        changes.append(
            _change(
                "class_order",
                f"'{key}' changes which evidence it prefers when several kinds are available: "
                f"now {_names(after)}, most preferred first (was {_names(before)}).",
                key,
            )
        )
    if old["required"] != new["required"]:
        text = (
            f"A gap in '{key}' now blocks the decision (it was optional)."
            if new["required"]
            else f"A gap in '{key}' no longer blocks the decision (it becomes optional)."
        )
        changes.append(_change("required", text, key))
    if old.get("max_items", 1) != new.get("max_items", 1):
        changes.append(
            _change(
                "max_items",
                f"'{key}' may now carry up to {new.get('max_items', 1)} supporting item(s) "
                f"(was {old.get('max_items', 1)}).",
                key,
            )
        )
    if old.get("description", "") != new.get("description", ""):
        changes.append(_change("description", f"The description of '{key}' changes.", key))
    return changes


def _purpose_changes(before: Sequence[str], after: Sequence[str]) -> list[dict[str, Any]]:
    changes = []
    added = [p for p in after if p not in before]
    removed = [p for p in before if p not in after]
    if added:
        changes.append(
            _change("purposes", f"The contract may now be used for {_names(added)} as well.")
        )
    if removed:
        changes.append(
            _change(
                "purposes",
                f"The contract may no longer be used for {_names(removed)}: such requests "
                "will be refused.",
            )
        )
    return changes


POLICY_WORDS = {
    "name": "the policy's name",
    "version": "the policy's version",
    "min_relevance": "the minimum relevance for optional items",
    "mandatory_form": "how mandatory items are sized",
    "role_order": "the order of the packet's sections",
    "on_overrun": "what happens when the packet is over budget",
}


def _policy_changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[dict[str, Any]]:
    changes = []
    for field, words in POLICY_WORDS.items():
        if before.get(field) != after.get(field):
            old, new = before.get(field), after.get(field)
            if isinstance(new, list):
                old, new = ", ".join(old or []), ", ".join(new)
            changes.append(
                _change("policy", f"The assembly policy changes {words} from {old} to {new}.")
            )
    return changes


# --------------------------------------------------------------------------- the scenarios


@dataclass(frozen=True)
class _Outcome:
    """One compile, reduced to what the report compares."""

    states: dict[str, str]
    admitted: frozenset[str]


# Compiles are pure functions of their input, so a sweep is memoised per process under a key
# naming everything it depends on: the compiler version, the contract's hash, the request, the
# corpus's content and the weak classes. A reviewer opening the report and then approving it
# (which recomputes it) pays for the compiles once. Bounded, first in first out.
_SWEEPS: OrderedDict[str, tuple[Any, Any, dict[str, _Outcome]]] = OrderedDict()
_SWEEPS_LOCK = threading.Lock()
SWEEP_CACHE_SIZE = 5000


def _sweep_key(request: Mapping[str, Any], contract_sha: str, corpus_sha: str, weak: Any) -> str:
    return sha256_hex([COMPILER_VERSION, contract_sha, dict(request), corpus_sha, list(weak)])


def _sweep(
    request: Mapping[str, Any],
    contract: Contract,
    corpus: Any,
    weak: Sequence[str],
    *,
    key: str | None = None,
):
    from scenarios import compiling

    if key is not None:
        with _SWEEPS_LOCK:
            cached = _SWEEPS.get(key)
        if cached is not None:
            return cached
    document = compiling.scenario_input(request, contract, corpus)
    swept = compiling.sweep_scenario(document, weak)
    outcomes = {
        (c.name or BASE): _Outcome(c.slot_states, frozenset(admitted_in(c.output)))
        for c in swept.compiles
    }
    result = (document, swept.base, outcomes)
    if key is not None:
        with _SWEEPS_LOCK:
            _SWEEPS[key] = result
            while len(_SWEEPS) > SWEEP_CACHE_SIZE:
                _SWEEPS.popitem(last=False)
    return result


def _failures(scenario: Any, base: Any) -> list[dict[str, Any]]:
    from scenarios import compiling

    return compiling.expectation_failures(
        base.output,
        base.slot_states,
        expected_slots=scenario.expected_slots,
        expected_admitted=scenario.expected_admitted,
        expected_rejected=scenario.expected_rejected,
    )


def _failure_text(name: str, failure: Mapping[str, Any], *, newly: bool) -> str:
    lead = f"'{name}' no longer meets" if newly else f"'{name}' now meets"
    if failure["what"] == "slot":
        expected = STATE_WORDS.get(failure["expected"], failure["expected"])
        actual = STATE_WORDS.get(failure["actual"], failure["actual"])
        if newly:
            return (
                f"{lead} its expectation for '{failure['key']}': expected {expected}, "
                f"it would be {actual}."
            )
        return f"{lead} its expectation for '{failure['key']}' ({expected})."
    if failure["what"] in ("admitted", "rejected"):
        expected, actual = set(failure["expected"]), set(failure["actual"])
        details = []
        if actual - expected:
            details.append(f"{_names(sorted(actual - expected))} would be {failure['what']} too")
        if expected - actual:
            details.append(f"{_names(sorted(expected - actual))} would not be {failure['what']}")
        detail = f" ({'; '.join(details)})" if details and newly else ""
        return f"{lead} its expectation of exactly which items are {failure['what']}{detail}."
    return f"{lead} its expectation: {failure['key']} {failure['actual']}."


def _where(name: str, perturbation: str) -> str:
    return f"'{name}'" if perturbation == BASE else f"'{name}' under {perturbation}"


def _scenario_report(
    scenario: Any,
    draft: Contract,
    published: Contract | None,
    corpus: Any,
    weak: Sequence[str],
    *,
    hashes: Mapping[str, str],
) -> dict[str, Any]:
    """`hashes`: the draft's and the published contract's sha256 and the corpus's."""
    from scenarios import compiling

    name = scenario.name
    request = scenario.request_document()
    entry: dict[str, Any] = {
        "name": name,
        "input_sha256": None,
        "compiles": 0,
        "flips": [],
        "admitted_changes": [],
        "newly_failing": [],
        "now_passing": [],
        "still_failing": 0,
        "problems": [],
    }
    try:
        document, draft_base, after = _sweep(
            request,
            draft,
            corpus,
            weak,
            key=_sweep_key(request, hashes["draft"], hashes["corpus"], weak),
        )
    except InvalidInput as exc:
        entry["problems"] = [
            f"'{name}' cannot be compiled against this version: {e['msg']}" for e in exc.errors
        ]
        entry["summary"] = []
        entry["changed"] = True
        return entry
    entry["input_sha256"] = compiling.input_sha256(document)
    entry["compiles"] = len(after)
    draft_failures = _failures(scenario, draft_base)
    before: dict[str, _Outcome] = {}
    published_failures: list[dict[str, Any]] = []
    if published is not None:
        try:
            _, published_base, before = _sweep(
                request,
                published,
                corpus,
                weak,
                key=_sweep_key(request, hashes["published"], hashes["corpus"], weak),
            )
            published_failures = _failures(scenario, published_base)
        except InvalidInput:
            before = {}
    for perturbation, outcome in after.items():
        previous = before.get(perturbation)
        if previous is None:
            continue
        for key in sorted(set(outcome.states) | set(previous.states)):
            old = previous.states.get(key, "missing")
            new = outcome.states.get(key, "missing")
            if old != new:
                text = (
                    f"In {_where(name, perturbation)}, '{key}' goes from "
                    f"{STATE_WORDS.get(old, old)} to {STATE_WORDS.get(new, new)}."
                )
                if old == "missing":
                    text = (
                        f"In {_where(name, perturbation)}, the new '{key}' is "
                        f"{STATE_WORDS.get(new, new)}."
                    )
                elif new == "missing":
                    text = (
                        f"In {_where(name, perturbation)}, '{key}' (was "
                        f"{STATE_WORDS.get(old, old)}) is no longer part of the contract."
                    )
                entry["flips"].append(
                    {
                        "perturbation": perturbation,
                        "proposition": key,
                        "before": old,
                        "after": new,
                        "text": text,
                    }
                )
        added = sorted(outcome.admitted - previous.admitted)
        removed = sorted(previous.admitted - outcome.admitted)
        if added or removed:
            parts = []
            if added:
                parts.append(f"would now admit {_names(added)}")
            if removed:
                parts.append(f"would no longer admit {_names(removed)}")
            entry["admitted_changes"].append(
                {
                    "perturbation": perturbation,
                    "added": added,
                    "removed": removed,
                    "text": f"In {_where(name, perturbation)}, the compiler "
                    + " and ".join(parts)
                    + ".",
                }
            )
    if published is not None:

        def identity(failure: Mapping[str, Any]) -> tuple[str, str]:
            return (failure["what"], failure["key"])

        old_failing = {identity(f) for f in published_failures}
        new_failing = {identity(f) for f in draft_failures}
        entry["newly_failing"] = [
            {**f, "text": _failure_text(name, f, newly=True)}
            for f in draft_failures
            if identity(f) not in old_failing
        ]
        entry["now_passing"] = [
            {**f, "text": _failure_text(name, f, newly=False)}
            for f in published_failures
            if identity(f) not in new_failing
        ]
        entry["still_failing"] = len(new_failing & old_failing)
    else:
        entry["newly_failing"] = [
            {**f, "text": _failure_text(name, f, newly=True)} for f in draft_failures
        ]
    entry["summary"] = _scenario_summary(name, entry, len(after))
    entry["changed"] = bool(
        entry["flips"]
        or entry["admitted_changes"]
        or entry["newly_failing"]
        or entry["now_passing"]
        or entry["problems"]
    )
    return entry


def _variants(perturbations: Sequence[str], total: int) -> str:
    """'in the base case and under 9 of its 12 variations' and the like."""
    base = BASE in perturbations
    variants = [p for p in perturbations if p != BASE]
    parts = []
    if base:
        parts.append("in the scenario as written")
    if variants:
        of = f"{len(variants)} of its {total - 1} variations" if total > 1 else "its variations"
        parts.append(f"under {of} ({', '.join(variants)})")
    return " and ".join(parts)


def _scenario_summary(name: str, entry: Mapping[str, Any], total: int) -> list[str]:
    """The scenario's changes grouped, one sentence per kind of change, for people who do
    not need every compile listed."""
    grouped: dict[tuple[str, str, str], list[str]] = {}
    for flip in entry["flips"]:
        key = (flip["proposition"], flip["before"], flip["after"])
        grouped.setdefault(key, []).append(flip["perturbation"])
    lines = [
        f"'{proposition}' goes from {STATE_WORDS.get(old, old)} to "
        f"{STATE_WORDS.get(new, new)} {_variants(where, total)}."
        for (proposition, old, new), where in grouped.items()
    ]
    moved: dict[tuple[tuple[str, ...], tuple[str, ...]], list[str]] = {}
    for change in entry["admitted_changes"]:
        moved.setdefault((tuple(change["added"]), tuple(change["removed"])), []).append(
            change["perturbation"]
        )
    for (added, removed), where in moved.items():
        parts = []
        if added:
            parts.append(f"admits {_names(added)}")
        if removed:
            parts.append(f"no longer admits {_names(removed)}")
        lines.append(f"The compiler {' and '.join(parts)} {_variants(where, total)}.")
    return lines


# --------------------------------------------------------------------------- the report


def baseline_version(version: ContractVersion) -> ContractVersion | None:
    """What a version is compared with: the decision type's published version (for a
    published version itself, the one it superseded)."""
    versions = version.decision_type.versions.exclude(pk=version.pk)
    published = versions.filter(status=ContractVersion.Status.PUBLISHED).first()
    if published is not None:
        return published
    if version.status == ContractVersion.Status.PUBLISHED:
        return (
            versions.filter(status=ContractVersion.Status.SUPERSEDED, number__lt=version.number)
            .order_by("-number")
            .first()
        )
    return None


def impact_report(version: ContractVersion) -> ImpactReport:
    """The report for `version` against the published contract; `ContractInvalid` if the
    version itself is not a valid contract."""
    from scenarios import compiling
    from scenarios.models import Corpus, CorpusCandidate, Scenario
    from scenarios.services import weak_classes

    draft = compiled_contract(version)
    draft_json = draft.model_dump(mode="json")
    baseline = baseline_version(version)
    published = compiled_contract(baseline) if baseline is not None else None
    published_json = published.model_dump(mode="json") if published is not None else None
    changes = contract_changes(published_json, draft_json)

    scenarios = list(
        Scenario.objects.filter(decision_type=version.decision_type)
        .select_related("decision_type")
        .order_by("position", "name", "id")
    )
    corpus_ids = {s.corpus_id for s in scenarios}
    directories = dict(Corpus.objects.filter(pk__in=corpus_ids).values_list("pk", "directory"))
    rows: dict[int, list[Any]] = {pk: [] for pk in corpus_ids}
    candidates = CorpusCandidate.objects.filter(corpus_id__in=corpus_ids).order_by("position", "id")
    for corpus_id, data in candidates.values_list("corpus_id", "data"):
        rows[corpus_id].append(data)
    corpora = {pk: compiling.CorpusModels.build(directories[pk], rows[pk]) for pk in corpus_ids}
    corpus_hashes = {pk: sha256_hex([directories[pk], rows[pk]]) for pk in corpus_ids}
    weak = weak_classes()
    contract_hashes = {
        "draft": _hash(draft_json),
        "published": _hash(published_json) if published_json is not None else "",
    }
    entries = [
        _scenario_report(
            s,
            draft,
            published,
            corpora[s.corpus_id],
            weak,
            hashes={**contract_hashes, "corpus": corpus_hashes[s.corpus_id]},
        )
        for s in scenarios
    ]
    summary = {
        "contract_changes": len(changes) if published is not None else 0,
        "scenarios": len(entries),
        "changed_scenarios": sum(e["changed"] for e in entries),
        "compiles": sum(e["compiles"] for e in entries) * (2 if published is not None else 1),
        "flipped_slots": sum(len(e["flips"]) for e in entries),
        "admitted_changes": sum(len(e["admitted_changes"]) for e in entries),
        "newly_failing": sum(len(e["newly_failing"]) for e in entries),
        "now_passing": sum(len(e["now_passing"]) for e in entries),
        "problems": sum(len(e["problems"]) for e in entries),
    }
    document = {
        "format": FORMAT,
        "decision_type": version.decision_type.key,
        "version": {"number": version.number, "sha256": version.sha256 or _hash(draft_json)},
        "published": (
            {"number": baseline.number, "sha256": _hash(published_json)}
            if baseline is not None
            else None
        ),
        "compiler_version": COMPILER_VERSION,
        "weak_classes": list(weak),
        "headline": _headline(version, baseline, summary),
        "contract_changes": changes,
        "scenarios": entries,
        "summary": summary,
    }
    return ImpactReport(document=document, sha256=sha256_hex(document))


def _hash(document: Any) -> str:
    return sha256_hex(document)


def _headline(
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
