"""The flip matrix of a run: one row per compile, one cell per proposition, and the coverage
of slot states it shows."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from contracts.documents import contract_document
from scenarios.models import SLOT_STATES, ScenarioResult, SuiteRun


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
            {"proposition": p, "states": [(s, self.seen[(p, s)]) for s in SLOT_STATES]}
            for p in self.propositions
        ]

    @property
    def never(self) -> list[tuple[str, str]]:
        return [(p, s) for p in self.propositions for s in SLOT_STATES if not self.seen[(p, s)]]


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

