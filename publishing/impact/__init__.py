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

Scenarios belong to the `scenarios` app. This package reads them through that app's public
pieces (`scenarios.compiling` for inputs, sweeps and expectations; `scenarios.services.
weak_classes`), compiling in memory rather than reusing stored runs: a stored run may predate
an edit of a scenario or a corpus, and the report must describe the suite as it is now.

One module per concern, re-exported here: `contract_changes` (the contract's diff as
sentences), `scenario_report` (one scenario compiled against both contracts), `sweeps` (the
compiles, memoised per process), `sentences` (the words the report is written in) and
`report` (the whole report and its hash); `stored` keeps it, computed in the background by
`tasks` (queued by `signals` when its inputs change), by the hash of its inputs (`inputs`),
in slices across workers (`computing`, `chunks`), each scenario's part in its own row
(`entries`), so that a page reads the report's head and one page of scenarios.
"""

from __future__ import annotations

from .contract_changes import POLICY_WORDS, contract_changes
from .entries import CHANGE_KINDS, ENTRIES_PER_PAGE, EntriesPage, entries_page
from .inputs import hashed_once, inputs_fingerprint
from .report import FORMAT, ImpactReport, baseline_version, impact_report
from .sentences import STATE_WORDS
from .shown import scenarios_shown
from .stored import (
    MAX_ATTEMPTS,
    REPORT_FAILED,
    REPORT_PENDING,
    REPORT_STOPPED,
    inputs_sha256,
    ready_report,
    report_ensure,
    report_request,
    report_requeue_if_stale,
    report_retry,
    report_state,
    reports_requeue_stale,
    stored_report,
)
from .sweeps import BASE, SWEEP_CACHE_SIZE

__all__ = [
    "BASE",
    "CHANGE_KINDS",
    "ENTRIES_PER_PAGE",
    "EntriesPage",
    "entries_page",
    "hashed_once",
    "FORMAT",
    "POLICY_WORDS",
    "MAX_ATTEMPTS",
    "REPORT_FAILED",
    "REPORT_PENDING",
    "REPORT_STOPPED",
    "STATE_WORDS",
    "SWEEP_CACHE_SIZE",
    "ImpactReport",
    "baseline_version",
    "contract_changes",
    "impact_report",
    "inputs_fingerprint",
    "inputs_sha256",
    "ready_report",
    "report_ensure",
    "report_request",
    "report_requeue_if_stale",
    "report_retry",
    "report_state",
    "reports_requeue_stale",
    "scenarios_shown",
    "stored_report",
]
