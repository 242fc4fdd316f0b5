"""Each variant stores its verdicts counted per proposition and kind (`verdict_counts`), a
finished run keeps its rows grouped by them (`SuiteRun.groups`), and the run's verdict
summary adds those up instead of reading every `flips`: the stored counts, the migration's
backfill of rows and runs stored before them, and the summary built from either the kept
groups or a grouped query give exactly what counting the verdicts in `flips` gives."""

from __future__ import annotations

import importlib
from collections import Counter

import pytest
from django.apps import apps
from django.db import connection
from django.test.utils import CaptureQueriesContext

from compiler import PROBE_OPERATORS, RELATIONS
from scenarios import selectors
from scenarios.models import ScenarioResult, SuiteRun

pytestmark = pytest.mark.django_db

backfill = importlib.import_module("scenarios.migrations.0009_verdict_counts_and_run_groups")


@pytest.fixture
def run(demo_run):
    return demo_run


def recounted(run):
    """The summary's cells, totals and columns counted from every variant's verdicts: what
    the summary computed before the counts were stored."""
    cells: dict[tuple[str, str], Counter[str]] = {}
    totals: Counter[str] = Counter()
    operators: list[str] = []
    rows = run.results.exclude(perturbation="").order_by("position")
    for result in rows:
        operator = (result.perturbation_args or {}).get("operator", "")
        if operator not in operators:
            operators.append(operator)
        for verdict in result.judged:
            key = (verdict["proposition"] or "", operator)
            cells.setdefault(key, Counter())[verdict["kind"]] += 1
            totals[verdict["kind"]] += 1
    order = list(RELATIONS)
    operators.sort(key=lambda op: order.index(op) if op in order else len(order))
    return cells, totals, operators


def summarised(run):
    summary = selectors.verdict_summary(run=run)
    cells = {
        (proposition, cell.operator): Counter(cell.counts)
        for proposition, row in summary.rows
        for cell in row
    }
    return cells, summary.totals, [column.operator for column in summary.columns]


def assert_summary_is_the_recount(run):
    cells, totals, operators = summarised(run)
    expected_cells, expected_totals, expected_operators = recounted(run)
    assert operators == expected_operators
    assert totals == {kind: expected_totals[kind] for kind in totals}
    assert sum(totals.values()) == sum(expected_totals.values())
    shown = {key for key in expected_cells if key in cells}
    assert {key: +cells[key] for key in shown} == {key: +expected_cells[key] for key in shown}
    # Every cell with a verdict on a proposition of the contract (or the whole variant) shows.
    propositions = {*selectors.run_propositions(run), ""}
    assert shown == {key for key in expected_cells if key[0] in propositions}


def test_the_run_has_verdicts_of_every_kind(run):
    _, totals, operators = recounted(run)
    assert totals["violation"] and totals["finding"] and totals["expected"]
    assert len(operators) > 3


def test_each_variant_stores_its_verdicts_counted(run):
    variants = list(run.results.exclude(perturbation=""))
    assert variants
    for result in variants:
        counted = Counter((v["proposition"] or "", v["kind"]) for v in result.verdicts)
        stored = Counter(
            {
                (key, kind): n
                for key, kinds in result.verdict_counts.items()
                for kind, n in kinds.items()
            }
        )
        assert stored == counted, result.perturbation
    assert not run.results.filter(perturbation="", verdict_counts__isnull=False).exists()


def test_the_summary_is_the_count_of_the_stored_verdicts(run):
    assert_summary_is_the_recount(run)


def test_a_finished_run_keeps_its_groups_and_its_pages_read_no_row(run, groups_as_counted):
    assert groups_as_counted(run)
    propositions = selectors.run_propositions(run)
    with CaptureQueriesContext(connection) as queries:
        selectors.verdict_summary(run=run, propositions=propositions)
        selectors.coverage_matrix(run=run)
    assert not any(ScenarioResult._meta.db_table in q["sql"] for q in queries.captured_queries)


def test_without_kept_groups_the_summary_is_one_query_that_reads_no_flips(run):
    SuiteRun.objects.filter(pk=run.pk).update(groups={})
    run.refresh_from_db()
    propositions = selectors.run_propositions(run)
    with CaptureQueriesContext(connection) as queries:
        selectors.verdict_summary(run=run, propositions=propositions)
    (query,) = queries.captured_queries
    assert "flips" not in query["sql"] and "verdict_counts" in query["sql"]
    assert_summary_is_the_recount(run)


def test_the_migration_backfills_rows_and_runs_stored_before_the_counts(run, groups_as_counted):
    # Runs of then had no contract probes, whose rows the coverage leaves out.
    run.results.filter(perturbation_args__operator__in=sorted(PROBE_OPERATORS)).delete()
    stored = dict(run.results.values_list("pk", "verdict_counts"))
    # Rows of then kept their verdicts inside `flips`, where the migration counts them.
    for result in run.results.exclude(perturbation=""):
        result.flips, result.verdicts = {**result.flips, "verdicts": result.verdicts}, None
        result.save(update_fields=["flips", "verdicts"])
    ScenarioResult.objects.update(verdict_counts=None)
    SuiteRun.objects.update(groups={})
    backfill.backfill_verdict_counts(apps, None)
    backfill.store_finished_runs_groups(apps, None)
    assert dict(run.results.values_list("pk", "verdict_counts")) == stored
    # The groups its rows give (as sets).
    assert groups_as_counted(run)
    assert_summary_is_the_recount(run)


def test_variants_stored_without_verdicts_still_have_their_column(run):
    """A run stored before verdicts existed: its variants' flips carry none; the summary
    still lists their perturbation kinds, with nothing counted."""
    for result in run.results.exclude(perturbation=""):
        result.flips = {"slots": result.flips["slots"]}
        result.verdict_counts = result.verdicts = None
        result.save(update_fields=["flips", "verdict_counts", "verdicts"])
    SuiteRun.objects.update(groups={})
    backfill.backfill_verdict_counts(apps, None)
    backfill.store_finished_runs_groups(apps, None)
    assert not run.results.filter(verdict_counts__isnull=False).exists()
    run.refresh_from_db()
    cells, totals, operators = summarised(run)
    assert operators == recounted(run)[2] and operators
    assert not any(totals.values()) and not any(any(c.values()) for c in cells.values())
