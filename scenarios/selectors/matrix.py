"""The flip matrix of a run: one row per compile, one cell per proposition, and the coverage
of slot states it shows."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Subquery
from django.utils.safestring import SafeString

from compiler.perturb import PROBE_OPERATORS
from contracts.documents import contract_document
from scenarios.expectations import failure_html
from scenarios.models import SLOT_STATES, ScenarioResult, SuiteRun
from scenarios.run_groups import state_groups


@dataclass
class Cell:
    proposition: str
    state: str
    flipped: bool = False
    base_state: str | None = None
    expected: str | None = None  # set when the expectation on this slot failed
    verdict: str = ""  # the variant's verdict on this slot: violation | finding | expected

    url: str = ""  # set by the view: where clicking the cell leads

    @property
    def failed(self) -> bool:
        return self.expected is not None

    @property
    def title(self) -> str:
        text = f"{self.proposition}: {self.state}"
        if self.flipped:
            text += f" (base: {self.base_state})"
        if self.failed:
            text += f" — expected {self.expected}"
        if self.verdict:
            text += f" — {self.verdict}"
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

    @property
    def failure_messages(self) -> list[SafeString]:
        """The failures the cells do not show, in plain words (escaped, names in `<bdi>`)."""
        return [failure_html(f) for f in self.other_failures]

    @property
    def verdict(self) -> str:
        """The variant's worst verdict ("" on a base or a run stored before verdicts)."""
        return (self.result.flips or {}).get("verdict", "")

    @property
    def label(self) -> str:
        """The perturbation in plain words; its technical name is `result.perturbation`."""
        return (self.result.flips or {}).get("label") or self.result.perturbation

    @property
    def verdicts(self) -> list[dict[str, Any]]:
        """The violations and findings of the variant, violations first."""
        judged = [v for v in self.result.judged if v["kind"] != "expected"]
        return sorted(judged, key=lambda v: v["kind"] != "violation")


@dataclass
class Matrix:
    run: SuiteRun
    propositions: list[str]
    rows: list[MatrixRow]
    totals: dict[str, int]
    seen: Counter[tuple[str, str]]
    page: int = 1  # of the detail rows, MATRIX_PAGE_SCENARIOS scenarios a page
    pages: int = 1

    @property
    def next_page(self) -> int | None:
        return self.page + 1 if self.page < self.pages else None

    @property
    def previous_page(self) -> int | None:
        return self.page - 1 if self.page > 1 else None

    @property
    def coverage(self) -> list[dict[str, Any]]:
        """Each proposition with, per state, how many compiles showed it (0: never)."""
        return [
            {"proposition": p, "states": [(s, self.seen[(p, s)]) for s in SLOT_STATES]}
            for p in self.propositions
        ]

    @property
    def never(self) -> list[tuple[str, str]]:
        return [(p, s) for p in self.propositions for s in SLOT_STATES if not self.seen[(p, s)]]


def run_propositions(run: SuiteRun) -> list[str]:
    return [p["key"] for p in contract_document(run.version)["propositions"]]


# Scenarios (each with its perturbations) per page of the matrix's detail rows: the page
# of a 10,000-scenario run holds what a 20-scenario one does (docs/scenarios.md). 20
# scenarios of 10 propositions are about 4,000 cells, 1 MB of HTML.
MATRIX_PAGE_SCENARIOS = 20


def flip_matrix(
    *,
    run: SuiteRun,
    only_flips: bool = False,
    kinds: Collection[str] | None = None,
    page: int | None = 1,
    page_size: int = MATRIX_PAGE_SCENARIOS,
) -> Matrix:
    """Rows are the run's compiles, base first then its perturbations; a fixed number of
    queries whatever the number of scenarios (the outputs themselves are never loaded).
    `kinds` keeps, besides the bases, only the variants whose verdict is one of them.

    `page` (from 1; past the end means the last) holds `page_size` scenarios' rows and the
    totals are the run's; `page=None` gives every row, with `seen` counting them all."""
    propositions = run_propositions(run)
    results = run.results.defer("output_json", "input_json").order_by("position")
    pages = 1
    if page is not None:
        pages = max(1, math.ceil(run.done / page_size))
        page = min(max(page, 1), pages)
        results = _page_of(run, results, (page - 1) * page_size, page_size)
    rows: list[MatrixRow] = []
    seen: Counter[tuple[str, str]] = Counter()
    totals = {"scenarios": 0, "perturbations": 0, "failures": 0, "flips": 0, "failing_rows": 0}
    for result in results:
        states = result.slot_states or {}
        flipped = result.flipped_propositions
        failed = {
            f["key"]: f["expected"]
            for f in result.expectation_failures
            if f["what"] == "slot" and "perturbation" not in f
        }
        judged = {
            v["proposition"]: v["kind"] for v in result.judged if v["proposition"] is not None
        }
        cells = []
        # Coverage is what the scenarios exercise: a contract probe's made-up items are not.
        counted = result.perturbation_args is None or (
            result.perturbation_args.get("operator") not in PROBE_OPERATORS
        )
        for key in propositions:
            state = states.get(key, "missing")
            seen[(key, state)] += counted
            cell = Cell(
                key, state, flipped=key in flipped, expected=failed.get(key),
                verdict=judged.get(key, ""),
            )  # fmt: skip
            if cell.flipped:
                cell.base_state = next(
                    f["base"] for f in result.flips["slots"] if f["proposition"] == key
                )
            cells.append(cell)
        row = MatrixRow(
            result=result,
            cells=cells,
            is_base=result.is_base,
            other_failures=[
                f for f in result.expectation_failures if f["what"] != "slot" or "perturbation" in f
            ],
        )
        _count(totals, result.is_base, result.expectation_failures, len(flipped))
        if only_flips and not row.is_base and not flipped:
            continue
        if kinds is not None and not row.is_base and row.verdict not in kinds:
            continue
        rows.append(row)
    if page is not None:
        totals = run_totals(run)
    return Matrix(
        run=run,
        propositions=propositions,
        rows=rows,
        totals=totals,
        seen=seen,
        page=page or 1,
        pages=pages,
    )


def _page_of(run: SuiteRun, results: Any, offset: int, size: int) -> Any:
    """The rows of the scenarios `offset` to `offset + size`: from the position of the
    offset-th base row to just before the next page's first one, in the same query."""
    bases = run.results.filter(perturbation="").order_by("position").values("position")
    results = results.filter(position__gte=Subquery(bases[offset : offset + 1]))
    if offset + size < run.done:
        results = results.filter(position__lt=Subquery(bases[offset + size : offset + size + 1]))
    return results


def _count(totals: dict[str, int], is_base: bool, failures: list[Any], flipped: int) -> None:
    totals["scenarios" if is_base else "perturbations"] += 1
    totals["failures"] += len(failures)
    totals["failing_rows"] += bool(failures)
    totals["flips"] += flipped


def run_totals(run: SuiteRun) -> dict[str, int]:
    """The matrix's totals for the whole run: a finished run's summary holds them (no query);
    a failed run's are counted from its stored rows."""
    summary = run.summary or {}
    if run.status == SuiteRun.Status.FINISHED and "flipped_slots" in summary:
        return {
            "scenarios": summary["scenarios"],
            "perturbations": summary["perturbations"],
            "failures": summary["failures"],
            "flips": summary["flipped_slots"],
            "failing_rows": summary["failing_scenarios"],
        }
    totals = {"scenarios": 0, "perturbations": 0, "failures": 0, "flips": 0, "failing_rows": 0}
    rows = run.results.values_list("perturbation", "expectation_failures", "flips")
    for perturbation, failures, flips in rows.iterator():
        _count(totals, not perturbation, failures, len(flips["slots"]) if flips else 0)
    return totals


def coverage_matrix(*, run: SuiteRun) -> Matrix:
    """The run's coverage (`Matrix.coverage`, `Matrix.never`) without its rows, added up from
    the rows grouped by their stored slot states (`scenarios.run_groups`: kept on a finished
    run, else one grouped query; compiles that end alike store the same value, so the groups
    are few). A row without a proposition, or with a state outside `SLOT_STATES`, counts it
    "missing"."""
    propositions = run_propositions(run)
    seen: Counter[tuple[str, str]] = Counter()
    for states, rows in state_groups(run):
        for key, state in states.items():
            seen[(key, state)] += rows
        for key in propositions:
            if states.get(key) not in SLOT_STATES:
                seen[(key, "missing")] += rows
    return Matrix(run=run, propositions=propositions, rows=[], totals=run_totals(run), seen=seen)
