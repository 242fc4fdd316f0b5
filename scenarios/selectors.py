"""Reads for the UI and commands, already filtered by what the user may see.

Everything hangs off a decision type found with `contracts.selectors.decision_type_for_user`:
a person without `view_decisiontype` on it gets `Http404` for its corpora, scenarios and runs,
exactly as for the type itself.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Count, QuerySet
from django.http import Http404

from compiler import CompileInput, CompileOutput, compile_input
from compiler.compare import compare
from contracts import selectors as contract_selectors
from contracts.documents import compiled_contract, contract_document
from contracts.models import ContractVersion, DecisionType, SourceClass
from contracts.selectors import User

from . import compiling
from .models import Corpus, Scenario, ScenarioResult, SuiteRun

STATES = ("supported", "contradicted", "unknown", compiling.REFUSED)


# --------------------------------------------------------------------------- objects


def decision_type_for_user(*, user: User, key: str) -> DecisionType:
    return contract_selectors.decision_type_for_user(user=user, key=key)


def decision_types_with_counts(*, user: User) -> QuerySet[DecisionType]:
    return (
        contract_selectors.decision_types_for_user(user=user)
        .annotate(
            scenario_count=Count("scenarios", distinct=True),
            corpus_count=Count("corpora", distinct=True),
        )
        .order_by("key")
    )


def corpora(*, decision_type: DecisionType) -> QuerySet[Corpus]:
    """The type's corpora with their sizes (`size`) and how many scenarios use them."""
    return decision_type.corpora.order_by("name").annotate(
        size=Count("candidates", distinct=True), used_by=Count("scenarios", distinct=True)
    )


def corpus_for_user(*, user: User, key: str, pk: int) -> Corpus:
    decision_type = decision_type_for_user(user=user, key=key)
    try:
        return decision_type.corpora.select_related("decision_type").get(pk=pk)
    except Corpus.DoesNotExist:
        raise Http404("No such corpus.") from None


def scenarios(*, decision_type: DecisionType) -> QuerySet[Scenario]:
    return decision_type.scenarios.select_related("corpus").order_by("position", "name", "id")


def scenario_for_user(*, user: User, key: str, pk: int) -> Scenario:
    decision_type = decision_type_for_user(user=user, key=key)
    try:
        return decision_type.scenarios.select_related("decision_type", "corpus").get(pk=pk)
    except Scenario.DoesNotExist:
        raise Http404("No such scenario.") from None


def runs(*, decision_type: DecisionType, limit: int = 20) -> QuerySet[SuiteRun]:
    return decision_type.suite_runs.select_related("version", "scenario", "created_by")[:limit]


def run_for_user(*, user: User, key: str, pk: int) -> SuiteRun:
    decision_type = decision_type_for_user(user=user, key=key)
    try:
        return decision_type.suite_runs.select_related(
            "decision_type", "version__decision_type", "scenario", "created_by"
        ).get(pk=pk)
    except SuiteRun.DoesNotExist:
        raise Http404("No such run.") from None


def result_for_user(*, user: User, key: str, run_pk: int, pk: int) -> ScenarioResult:
    run = run_for_user(user=user, key=key, pk=run_pk)
    try:
        result = run.results.get(pk=pk)
    except ScenarioResult.DoesNotExist:
        raise Http404("No such result.") from None
    result.run = run
    return result


def version_for(*, decision_type: DecisionType, number: int | None) -> ContractVersion:
    """The numbered version, or the one the editor shows (the open draft, else the latest)."""
    if number is None:
        version = contract_selectors.current_version(decision_type=decision_type)
    else:
        version = decision_type.versions.filter(number=number).first()
    if version is None:
        raise Http404("No such version.")
    version.decision_type = decision_type
    return version


def published_version(*, decision_type: DecisionType) -> ContractVersion | None:
    return decision_type.versions.filter(status=ContractVersion.Status.PUBLISHED).first()


def corpus_export(*, corpus: Corpus) -> dict[str, Any]:
    return compiling.corpus_document(
        corpus.directory,
        corpus.candidates.order_by("position", "id").values_list("data", flat=True),
    )


@dataclass(frozen=True)
class KnownValues:
    """What a candidate's free-text fields can be checked against and offered from: the
    catalogue's classes, every version's propositions and purposes, and the roles and
    purposes the corpus already uses (with its directory's role hierarchy)."""

    evidence_classes: frozenset[str]
    retired_classes: frozenset[str]
    propositions: frozenset[str]
    purposes: frozenset[str]
    roles: frozenset[str]
    has_contract: bool


def known_values(*, decision_type: DecisionType, corpus: Corpus | None = None) -> KnownValues:
    classes = dict(SourceClass.objects.values_list("key", "retired"))
    documents = [contract_document(v) for v in decision_type.versions.order_by("number")]
    propositions = {p.get("key") for d in documents for p in d.get("propositions", ())}
    purposes = {purpose for d in documents for purpose in d.get("purposes", ())}
    roles: set[str] = set()
    if corpus is not None:
        for data in corpus.candidates.values_list("data", flat=True):
            roles.update(data.get("allowed_roles", ()))
            purposes.update(data.get("allowed_purposes", ()))
        for child, parents in (corpus.directory.get("role_parents") or {}).items():
            roles.add(child)
            roles.update(parents if isinstance(parents, list) else [parents])
    return KnownValues(
        evidence_classes=frozenset(k for k, retired in classes.items() if not retired),
        retired_classes=frozenset(k for k, retired in classes.items() if retired),
        propositions=frozenset(p for p in propositions if isinstance(p, str)),
        purposes=frozenset(p for p in purposes if isinstance(p, str)),
        roles=frozenset(r for r in roles if isinstance(r, str)),
        has_contract=bool(documents),
    )


# --------------------------------------------------------------------------- compiling now


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


# --------------------------------------------------------------------------- the flip matrix


@dataclass
class Cell:
    proposition: str
    state: str
    flipped: bool = False
    base_state: str | None = None
    expected: str | None = None  # set when the expectation on this slot failed

    url: str = ""  # set by the view: where clicking the cell leads

    @property
    def failed(self) -> bool:
        return self.expected is not None

    @property
    def css(self) -> str:
        return "cell" + (" flipped" if self.flipped else "") + (" failed" if self.failed else "")

    @property
    def title(self) -> str:
        text = f"{self.proposition}: {self.state}"
        if self.flipped:
            text += f" (base: {self.base_state})"
        if self.failed:
            text += f" — expected {self.expected}"
        return text


@dataclass
class MatrixRow:
    result: ScenarioResult
    cells: list[Cell]
    is_base: bool
    other_failures: list[dict[str, Any]] = field(default_factory=list)

    @property
    def flipped(self) -> int:
        return sum(c.flipped for c in self.cells)


@dataclass
class Matrix:
    run: SuiteRun
    propositions: list[str]
    rows: list[MatrixRow]
    totals: dict[str, int]
    seen: Counter[tuple[str, str]]

    @property
    def coverage(self) -> list[dict[str, Any]]:
        """Each proposition with, per state, how many compiles showed it (0: never)."""
        return [
            {"proposition": p, "states": [(s, self.seen[(p, s)]) for s in STATES]}
            for p in self.propositions
        ]

    @property
    def never(self) -> list[tuple[str, str]]:
        return [(p, s) for p in self.propositions for s in STATES if not self.seen[(p, s)]]


def run_propositions(run: SuiteRun) -> list[str]:
    return [p["key"] for p in contract_document(run.version)["propositions"]]


def flip_matrix(*, run: SuiteRun, only_flips: bool = False) -> Matrix:
    """Rows are the run's compiles, base first then its perturbations; a fixed number of
    queries whatever the number of scenarios (the outputs themselves are never loaded)."""
    propositions = run_propositions(run)
    results = run.results.defer("output_json").order_by("position")
    rows: list[MatrixRow] = []
    seen: Counter[tuple[str, str]] = Counter()
    totals = {"scenarios": 0, "perturbations": 0, "failures": 0, "flips": 0, "failing_rows": 0}
    for result in results:
        states = result.slot_states or {}
        flipped = result.flipped_propositions
        failed = {
            f["key"]: f["expected"] for f in result.expectation_failures if f["what"] == "slot"
        }
        cells = []
        for key in propositions:
            state = states.get(key, "missing")
            seen[(key, state)] += 1
            cell = Cell(key, state, flipped=key in flipped, expected=failed.get(key))
            if cell.flipped:
                cell.base_state = next(
                    f["base"] for f in result.flips["slots"] if f["proposition"] == key
                )
            cells.append(cell)
        row = MatrixRow(
            result=result,
            cells=cells,
            is_base=result.is_base,
            other_failures=[f for f in result.expectation_failures if f["what"] != "slot"],
        )
        if row.is_base:
            totals["scenarios"] += 1
        else:
            totals["perturbations"] += 1
        totals["failures"] += len(result.expectation_failures)
        totals["failing_rows"] += bool(result.expectation_failures)
        totals["flips"] += len(flipped)
        if only_flips and not row.is_base and not flipped:
            continue
        rows.append(row)
    return Matrix(run=run, propositions=propositions, rows=rows, totals=totals, seen=seen)


# --------------------------------------------------------------------------- packet and diff


@dataclass(frozen=True)
class PacketView:
    """One compile's output arranged for the packet view."""

    output: dict[str, Any]

    @property
    def compiled(self) -> bool:
        return self.output.get("result") == "compiled"

    @property
    def budget_percent(self) -> int:
        budget = self.output.get("token_budget") or 0
        used = self.output.get("tokens_used") or 0
        return min(100, round(100 * used / budget)) if budget else 0

    @property
    def slots(self) -> list[dict[str, Any]]:
        return list(self.output.get("slots", []))

    @property
    def packet(self) -> list[dict[str, Any]]:
        return list(self.output.get("packet", []))

    @property
    def rejected(self) -> list[dict[str, Any]]:
        return list(self.output.get("rejected", []))

    @property
    def trace(self) -> list[dict[str, Any]]:
        return list(self.output.get("trace", []))

    @property
    def errors(self) -> list[dict[str, Any]]:
        return list(self.output.get("errors", []))


def packet_view(result: ScenarioResult) -> PacketView:
    return PacketView(json.loads(result.output_json))


@dataclass(frozen=True)
class SlotPair:
    proposition: str
    base: dict[str, Any] | None
    variant: dict[str, Any] | None
    flipped: bool


@dataclass(frozen=True)
class Diff:
    base: ScenarioResult
    variant: ScenarioResult
    base_view: PacketView
    variant_view: PacketView
    slots: list[SlotPair]
    flips: dict[str, Any]
    rejected_added: list[dict[str, Any]]
    rejected_removed: list[dict[str, Any]]
    focus: str | None


def base_of(result: ScenarioResult) -> ScenarioResult:
    """The base compile of the scenario this result belongs to."""
    return (
        ScenarioResult.objects.filter(
            run_id=result.run_id, position__lte=result.position, perturbation=""
        )
        .order_by("-position")
        .first()
    ) or result


def result_diff(*, result: ScenarioResult, focus: str | None = None) -> Diff:
    """The variant against its base: slots side by side, admitted/rejected changes, tokens."""
    base = base_of(result)
    base_view, variant_view = packet_view(base), packet_view(result)
    base_slots = {s["proposition"]: s for s in base_view.slots}
    variant_slots = {s["proposition"]: s for s in variant_view.slots}
    flipped = result.flipped_propositions
    keys = list(dict.fromkeys([*base.slot_states, *result.slot_states]))
    slots = [SlotPair(k, base_slots.get(k), variant_slots.get(k), k in flipped) for k in keys]
    before = {(r["id"], r["reason"], r.get("detail")) for r in base_view.rejected}
    after = {(r["id"], r["reason"], r.get("detail")) for r in variant_view.rejected}
    as_dicts = lambda rows: [  # noqa: E731
        {"id": i, "reason": r, "detail": d} for i, r, d in sorted(rows)
    ]
    return Diff(
        base=base,
        variant=result,
        base_view=base_view,
        variant_view=variant_view,
        slots=slots,
        flips=result.flips or {},
        rejected_added=as_dicts(after - before),
        rejected_removed=as_dicts(before - after),
        focus=focus,
    )


def first_flipped(*, run: SuiteRun) -> ScenarioResult | None:
    for result in run.results.defer("output_json").exclude(perturbation="").order_by("position"):
        if result.flipped_propositions:
            return result
    return None


# --------------------------------------------------------------------------- reports


def run_report(*, run: SuiteRun) -> dict[str, Any]:
    """The run's summary, every expectation failure and every flip, as plain JSON: what
    `run_scenarios --json` prints and what a review can keep."""
    failures, flips = [], []
    for result in run.results.defer("output_json").order_by("position"):
        for failure in result.expectation_failures:
            failures.append({"scenario": result.scenario_name, **failure})
        for flip in (result.flips or {}).get("slots", []):
            flips.append(
                {
                    "scenario": result.scenario_name,
                    "perturbation": result.perturbation,
                    **flip,
                }
            )
    return {
        "decision_type": run.decision_type.key,
        "version": run.version.number,
        "run": run.pk,
        "status": run.status,
        "error": run.error or None,
        "contract_sha256": run.contract_sha256,
        "summary": run.summary,
        "failures": failures,
        "flips": flips,
    }


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
