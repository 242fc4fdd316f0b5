"""The flip matrix of a run: one row per compile, one cell per proposition, and the coverage
of slot states it shows."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Q
from django.utils.safestring import SafeString

from compiler import FINDING, PROBE_OPERATORS, VIOLATION
from contracts.documents import contract_document
from scenarios.expectations import failure_html
from scenarios.models import SLOT_STATES, ScenarioResult, SuiteRun
from scenarios.result_rows import POSITION_STRIDE
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
    def marked(self) -> bool:
        """Whether the cell says more than its state: flipped, failed, a violation or a
        finding (most cells of a variant are judged expected, which is no news). Only such
        cells link to the compile (focused on their proposition); the row's name links to
        it whole, so a page is not hundreds of links alike."""
        return self.flipped or self.failed or self.verdict in (VIOLATION, FINDING)

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
    url: str = ""  # set by the view: the base's packet, or the variant's diff against it
    # A variant first on its page: its scenario's name is shown with it (the base is above).
    continued: bool = False

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
        return self.result.violations_and_findings


@dataclass
class Matrix:
    run: SuiteRun
    propositions: list[str]
    rows: list[MatrixRow]
    totals: dict[str, int]
    seen: Counter[tuple[str, str]]
    after: int | None = None  # the position the rows follow (None: from the first)
    next_after: int | None = None  # where the next rows begin (None: these are the last)

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


# About as many cells as a page of the matrix's rows shows: a screenful or two that a person
# reads, some 25 KB of HTML, whatever the size of the run or the number of propositions
# (docs/scenarios.md). The next rows come on demand.
MATRIX_PAGE_CELLS = 300
MATRIX_PAGE_ROWS = (10, 40)  # the fewest and most rows a page holds


def matrix_page_rows(propositions: int) -> int:
    """The rows a page of the matrix holds for a contract of `propositions` propositions."""
    fewest, most = MATRIX_PAGE_ROWS
    return max(fewest, min(most, MATRIX_PAGE_CELLS // max(propositions, 1)))


# What a matrix row reads of a result: never its output or input (a base's are tens of
# kilobytes).
_ROW_FIELDS = (
    "scenario_name", "position", "perturbation", "perturbation_args", "result",
    "slot_states", "flips", "expectation_failures", "verdicts",
)  # fmt: skip


def flip_matrix(
    *,
    run: SuiteRun,
    only_flips: bool = False,
    kinds: Collection[str] | None = None,
    after: int | None = None,
    paged: bool = True,
) -> Matrix:
    """Rows are the run's compiles, base first then its perturbations; a fixed number of
    queries whatever the number of scenarios. `kinds` keeps, besides the bases, only the
    variants whose verdict is one of them, and `only_flips` only those that flip a slot: the
    database picks the rows, so a page reads only the rows it shows.

    `paged`: the rows after position `after` (from the first if None), as many as
    `matrix_page_rows` gives, with `next_after` where the next ones begin, and the run's
    totals. Otherwise every row, with `seen` counting them all."""
    propositions = run_propositions(run)
    results = run.results.only(*_ROW_FIELDS).order_by("position")
    shown = Q()
    if kinds is not None:
        shown &= Q(flips__verdict__in=list(kinds))
    if only_flips:
        # A variant that flips nothing stores an empty list of flipped slots.
        shown &= Q(flips__slots__0__isnull=False)
    if shown:
        results = results.filter(Q(perturbation="") | shown)
    size = matrix_page_rows(len(propositions))
    if paged:
        start = -1 if after is None else after
        # Every base is shown and a scenario's rows span at most POSITION_STRIDE positions,
        # so the page lies within the next `size + 1` strides: a bound that keeps the
        # database to those rows, whichever plan it picks (one that sorts every row of the
        # run, chosen on stale statistics, took 0.3 s at 2,000 scenarios on PostgreSQL).
        results = results.filter(
            position__gt=start, position__lte=start + (size + 1) * POSITION_STRIDE
        )
        results = results[: size + 1]  # one more says whether there are more
    rows: list[MatrixRow] = []
    seen: Counter[tuple[str, str]] = Counter()
    totals = {"scenarios": 0, "perturbations": 0, "failures": 0, "flips": 0, "failing_rows": 0}
    for result in results:
        rows.append(_row(result, propositions, seen))
        _count(totals, result.is_base, result.expectation_failures, rows[-1].flipped)
    next_after = None
    if paged:
        totals = run_totals(run)
        if len(rows) > size:
            rows = rows[:size]
            next_after = rows[-1].result.position
        if rows and not rows[0].is_base:
            rows[0].continued = True
    return Matrix(
        run=run,
        propositions=propositions,
        rows=rows,
        totals=totals,
        seen=seen,
        after=after,
        next_after=next_after,
    )


def _row(
    result: ScenarioResult, propositions: list[str], seen: Counter[tuple[str, str]]
) -> MatrixRow:
    states = result.slot_states or {}
    flipped = {f["proposition"]: f["base"] for f in (result.flips or {}).get("slots", [])}
    failed = {
        f["key"]: f["expected"]
        for f in result.expectation_failures
        if f["what"] == "slot" and "perturbation" not in f
    }
    judged = {v["proposition"]: v["kind"] for v in result.judged if v["proposition"] is not None}
    # Coverage is what the scenarios exercise: a contract probe's made-up items are not.
    counted = result.perturbation_args is None or (
        result.perturbation_args.get("operator") not in PROBE_OPERATORS
    )
    cells = []
    for key in propositions:
        state = states.get(key, "missing")
        seen[(key, state)] += counted
        cells.append(
            Cell(
                key,
                state,
                flipped=key in flipped,
                base_state=flipped.get(key),
                expected=failed.get(key),
                verdict=judged.get(key, ""),
            )  # fmt: skip
        )
    return MatrixRow(
        result=result,
        cells=cells,
        is_base=result.is_base,
        other_failures=[
            f for f in result.expectation_failures if f["what"] != "slot" or "perturbation" in f
        ],
    )


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
