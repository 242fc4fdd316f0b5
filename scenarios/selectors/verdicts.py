"""The verdicts of a run (docs/verdicts.md): the summary the flip matrix opens with —
propositions × perturbation kinds, each cell the count of violations, findings and expected
— its legend, and the corpus-derived findings of the run's corpora.

The summary adds up the variants' stored `verdict_counts` (written with each result row,
`scenarios.result_rows.verdict_counts`), grouped (`scenarios.run_groups`: kept on a finished
run, else one grouped query), whatever the number of scenarios; it never reads the `flips`
JSON the verdicts themselves are kept in."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from compiler import EXPECTED, FINDING, RELATIONS, VIOLATION, corpus_findings, purpose_findings
from contracts.documents import ContractInvalid, compiled_contract
from contracts.models import SourceClass
from scenarios import compiling
from scenarios.models import Corpus, CorpusCandidate, SuiteRun
from scenarios.run_groups import verdict_groups

from .matrix import run_propositions

KINDS = (VIOLATION, FINDING, EXPECTED)
# Told by icon and word as well as colour (the CSS classes are `verdict-<kind>`).
LEGEND: tuple[dict[str, str], ...] = (
    {"kind": VIOLATION, "icon": "✖", "word": "violation",
     "meaning": "the relation is broken: the contract or the compiler is wrong"},
    {"kind": FINDING, "icon": "▲", "word": "finding",
     "meaning": "allowed, but a reviewer should know"},
    {"kind": EXPECTED, "icon": "✓", "word": "expected",
     "meaning": "the perturbation's documented consequence, or nothing changed"},
)  # fmt: skip
ICONS = {entry["kind"]: entry["icon"] for entry in LEGEND}
# The perturbation kinds in plain words, for the summary's columns (the operator on hover).
OPERATOR_WORDS = {
    "shift_days": "date moved",
    "hide": "an item hidden",
    "substitute_class": "an item recast",
    "swap_principal": "another caller",
    "revoke_delegation": "delegation revoked",
    "contaminate": "forbidden high scorers",
    "promote_weak": "weak source claiming approval",
    "look_alike": "look-alikes",
    "contradict_first": "contradictions",
    "contradict": "a contradiction",
    "swap_entity": "another entity",
    "supersede": "an item superseded",
    "replay_expiry": "replayed after expiry",
}
WHOLE_VARIANT = ""  # the summary row of faults that belong to no slot


@dataclass(frozen=True)
class Column:
    operator: str

    @property
    def label(self) -> str:
        return OPERATOR_WORDS.get(self.operator, self.operator.replace("_", " "))

    @property
    def title(self) -> str:
        relation = RELATIONS.get(self.operator)
        return f"{self.operator}: {relation.relation}" if relation else self.operator


@dataclass(frozen=True)
class SummaryCell:
    proposition: str
    operator: str
    counts: dict[str, int]

    @property
    def worst(self) -> str:
        return next((k for k in KINDS if self.counts[k]), "")


@dataclass(frozen=True)
class VerdictSummary:
    propositions: list[str]
    columns: list[Column]
    rows: list[tuple[str, list[SummaryCell]]]  # (proposition or WHOLE_VARIANT, cells)
    totals: dict[str, int]
    legend: tuple[dict[str, str], ...] = LEGEND

    @property
    def any(self) -> bool:
        return any(self.totals.values())


def verdict_summary(*, run: SuiteRun, propositions: list[str] | None = None) -> VerdictSummary:
    """Counts of each verdict kind per proposition and perturbation kind, added up from the
    variants grouped by their stored `verdict_counts` (`scenarios.run_groups`): a finished
    run keeps its groups, any other is one grouped query; one more without `propositions`
    (the run's contract's keys, in order). No `flips` is read."""
    propositions = propositions if propositions is not None else run_propositions(run)
    counts: dict[tuple[str, str], Counter[str]] = {}
    totals: Counter[str] = Counter()
    first_seen: dict[str, int] = {}
    for operator, stored, variants, first in verdict_groups(run):
        first_seen[operator] = min(first, first_seen.get(operator, first))
        for proposition, kinds in (stored or {}).items():
            cell = counts.setdefault((proposition, operator), Counter())
            for kind, count in kinds.items():
                cell[kind] += count * variants
                totals[kind] += count * variants
    # Known operators in the relations' order; any other after them, as first met in the run.
    operators = sorted(first_seen, key=first_seen.__getitem__)
    order = list(RELATIONS)
    operators.sort(key=lambda op: order.index(op) if op in order else len(order))
    keys = [*propositions, WHOLE_VARIANT]
    table = [
        (
            key,
            [
                SummaryCell(key, op, {k: counts.get((key, op), Counter())[k] for k in KINDS})
                for op in operators
            ],
        )
        for key in keys
        if key != WHOLE_VARIANT or any((WHOLE_VARIANT, op) in counts for op in operators)
    ]
    return VerdictSummary(
        propositions=propositions,
        columns=[Column(op) for op in operators],
        rows=table,
        totals={k: totals[k] for k in KINDS},
    )


def tier_words() -> dict[str, str]:
    """Each source class's authority tier in words (for the corpus findings' text)."""
    names = dict(SourceClass.AuthorityTier.choices)
    return {
        key: str(names.get(tier, tier)).lower()
        for key, tier in SourceClass.objects.values_list("key", "authority_tier")
    }


def run_corpus_findings(*, run: SuiteRun) -> list[dict[str, Any]]:
    """The findings the run's contract and each corpus its scenarios use say about each
    other, without compiling (`compiler.corpus_findings`), each with its corpus."""
    try:
        contract = compiled_contract(run.version)
    except ContractInvalid:  # the run failed on it, and says why
        return []
    scenarios = run.version.decision_type.scenarios.all()
    if run.scenario_id is not None:
        scenarios = scenarios.filter(pk=run.scenario_id)
    corpus_ids = scenarios.values("corpus_id")
    tiers = tier_words()
    rows: dict[int, list[Any]] = {}
    candidates = CorpusCandidate.objects.filter(corpus_id__in=corpus_ids).order_by("position", "id")
    for corpus_id, data in candidates.values_list("corpus_id", "data"):
        rows.setdefault(corpus_id, []).append(data)
    findings = []
    if run.scenario_id is None:
        purposes = scenarios.values_list("purpose", flat=True).distinct()
        findings += [{**f.to_json(), "corpus": ""} for f in purpose_findings(contract, purposes)]
    for corpus in Corpus.objects.filter(pk__in=corpus_ids).order_by("name", "pk"):
        models = compiling.CorpusModels.build(corpus.directory, rows.get(corpus.pk, []))
        findings += [
            {**f.to_json(), "corpus": corpus.name}
            for f in corpus_findings(contract, models.candidates, tiers)
        ]
    return findings
