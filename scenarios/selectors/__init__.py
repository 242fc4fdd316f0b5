"""Reads for the UI and commands, already filtered by what the user may see.

Everything hangs off a decision type found with `contracts.selectors.decision_type_for_user`:
a person without `view_decisiontype` on it finds none of its corpora, scenarios and runs,
exactly as for the type itself. A lookup of one object raises the model's `DoesNotExist`
when it is not there; the views answer that with 404.

One module per concern, re-exported here (callers write `from scenarios import selectors`):
`objects` (lookups, lists, the corpus export), `lists` (the list pages' rows and their
filters), `known` (the values a candidate is checked against), `previews` (a scenario
compiled now: expectations preview, three-way comparison), `matrix` (the flip matrix and
coverage), `verdicts` (the matrix's verdict summary, its legend, the corpus-derived
findings), `packets` (packet view, diff), `reports` (run report, run comparison) and
`strength` (a version's suite-strength runs and panel).
"""

from __future__ import annotations

from scenarios.models import SLOT_STATES as STATES

from .known import KnownValues, known_values
from .lists import (
    ScenarioFilter,
    archived_candidate_rows,
    archived_scenario_rows,
    candidate_rows,
    corpus_choices,
    has_scenarios,
    proposition_keys,
    run_rows,
    scenario_rows,
    suite_counts,
)
from .matrix import (
    MATRIX_PAGE_CELLS,
    Cell,
    Matrix,
    MatrixRow,
    coverage_matrix,
    flip_matrix,
    matrix_page_rows,
    run_propositions,
    run_totals,
)
from .objects import (
    archived_corpora,
    archived_scenarios,
    corpora,
    corpus_export,
    corpus_for_user,
    decision_type_for_user,
    decision_types_with_counts,
    published_version,
    result_for_user,
    run_for_user,
    runs,
    scenario_for_user,
    scenarios,
    version_for,
)
from .packets import Diff, PacketView, SlotPair, base_of, first_flipped, packet_view, result_diff
from .previews import (
    COMPARISON_LABELS,
    Comparison,
    ExpectationChange,
    ExpectationPreview,
    comparison,
    compile_scenario,
    expectation_preview,
    scenario_document,
)
from .reports import report_from_rows, run_comparison, run_report, run_report_stream
from .strength import (
    StrengthPanel,
    latest_mutation_run,
    mutation_run_of,
    mutation_runs,
    strength_panel,
)
from .verdicts import LEGEND, SummaryCell, VerdictSummary, run_corpus_findings, verdict_summary

__all__ = [
    "ScenarioFilter",
    "archived_candidate_rows",
    "archived_scenario_rows",
    "candidate_rows",
    "corpus_choices",
    "has_scenarios",
    "proposition_keys",
    "run_rows",
    "scenario_rows",
    "suite_counts",
    "archived_corpora",
    "archived_scenarios",
    "StrengthPanel",
    "latest_mutation_run",
    "mutation_run_of",
    "mutation_runs",
    "strength_panel",
    "LEGEND",
    "VerdictSummary",
    "run_corpus_findings",
    "verdict_summary",
    "COMPARISON_LABELS",
    "STATES",
    "Cell",
    "SummaryCell",
    "Comparison",
    "Diff",
    "ExpectationChange",
    "ExpectationPreview",
    "KnownValues",
    "Matrix",
    "MatrixRow",
    "PacketView",
    "SlotPair",
    "base_of",
    "compile_scenario",
    "comparison",
    "corpora",
    "corpus_export",
    "corpus_for_user",
    "decision_type_for_user",
    "decision_types_with_counts",
    "expectation_preview",
    "first_flipped",
    "flip_matrix",
    "coverage_matrix",
    "run_totals",
    "MATRIX_PAGE_CELLS",
    "matrix_page_rows",
    "known_values",
    "packet_view",
    "published_version",
    "result_diff",
    "result_for_user",
    "run_comparison",
    "run_for_user",
    "run_propositions",
    "run_report",
    "run_report_stream",
    "report_from_rows",
    "runs",
    "scenario_document",
    "scenario_for_user",
    "scenarios",
    "version_for",
]
