"""Fixtures, scenarios, runs and the flip review: thin function views, one module per page
area — `corpora` (import, corpus, export, candidate form), `scenario_pages` (scenario form,
scenario page with "take as expected", comparison) and `runs` (index, suite, run, matrix,
report, coverage, packet, diff); what they share is in `scenario_common`.

One template per page; an htmx request gets only the named partial it swaps
(`"scenarios/run.html#progress"`), a plain request the whole page, so every page works
without JavaScript. Reads go through `scenarios.selectors` (404 without view permission on
the decision type), writes through `scenarios.services` (403 without the right permission).

This module re-exports the views and the messages tests assert on, so
`from workbench.views import scenarios as views` keeps working.
"""

from __future__ import annotations

from .corpora import (
    CANDIDATE_GONE,
    CANDIDATE_SAVED,
    IMPORTED,
    candidate_edit,
    corpus_detail,
    corpus_export,
    corpus_import,
)
from .runs import (
    RUN_QUEUED,
    index,
    result_diff,
    result_packet,
    run_coverage,
    run_detail,
    run_report,
    run_start,
    suite,
)
from .scenario_common import NO_LOCK, WARNING
from .scenario_pages import (
    DEFAULT_TOP_K,
    EXPECTATIONS_MOVED,
    EXPECTATIONS_TAKEN,
    SCENARIO_SAVED,
    scenario_compare,
    scenario_detail,
    scenario_edit,
    scenario_take_expected,
)

__all__ = [
    "CANDIDATE_GONE",
    "CANDIDATE_SAVED",
    "DEFAULT_TOP_K",
    "EXPECTATIONS_MOVED",
    "EXPECTATIONS_TAKEN",
    "IMPORTED",
    "NO_LOCK",
    "RUN_QUEUED",
    "SCENARIO_SAVED",
    "WARNING",
    "candidate_edit",
    "corpus_detail",
    "corpus_export",
    "corpus_import",
    "index",
    "result_diff",
    "result_packet",
    "run_coverage",
    "run_detail",
    "run_report",
    "run_start",
    "scenario_compare",
    "scenario_detail",
    "scenario_edit",
    "scenario_take_expected",
    "suite",
]
