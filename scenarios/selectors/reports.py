"""Runs as plain JSON: one run's report, and two runs of the suite compared."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

from django.db import connection

from scenarios import stored_reports
from scenarios.models import ScenarioResult, SuiteRun


def run_report(*, run: SuiteRun) -> dict[str, Any]:
    """The run's summary, every expectation failure and every flip, as plain JSON: what
    `run_scenarios --json` prints and what a review can keep."""
    return {**_report_head(run), "failures": list(_failures(run)), "flips": list(_flips(run))}


def run_report_stream(*, run: SuiteRun) -> Iterator[str]:
    """`run_report` as JSON text, a piece at a time: a finished run's put together from the
    pieces its commits kept (`scenarios.stored_reports`), or read back from the parts of a
    report written whole when it finished; any other run's from its rows
    (`report_from_rows`)."""
    if stored_reports.has_pieces(run):
        return stored_reports.from_pieces(run, _opening(run))
    parts = run.report_parts.order_by("number").values_list("text", flat=True)
    if run.status == SuiteRun.Status.FINISHED and parts.exists():
        return parts.iterator(chunk_size=1)
    return report_from_rows(run=run)


def _opening(run: SuiteRun) -> str:
    """The report's text up to its failures' items."""
    head = json.dumps(_report_head(run), indent=2)
    return head[: head.rindex("}")].rstrip() + ',\n  "failures": ['


def report_from_rows(*, run: SuiteRun) -> Iterator[str]:
    """`run_report` as JSON text, a batch of items at a time. Each failure and flip is written
    by the database from the stored JSON (`_stored_items`): no row is decoded into Python and
    encoded again, and rows are fetched in batches (a server-side cursor on PostgreSQL), so a
    100,000-compile run's report never sits whole in memory."""
    yield _opening(run)
    for key in ("failures", "flips"):
        if key == "flips":
            yield '],\n  "flips": ['
        # A finished run's summary counts its failures: none, and no row need be read.
        if key == "failures" and not _may_have_failures(run):
            continue
        separator = "\n    "
        for batch in _stored_items(run, key):
            yield separator + stored_reports.ITEM_SEPARATOR.join(batch)
            separator = stored_reports.ITEM_SEPARATOR
    yield "]\n}\n"


REPORT_BATCH = 5000  # items a streamed piece of the report holds
# Each stored failure (`expectation_failures`) or flip (`flips.slots`) of the run as the text
# of a JSON object headed by its row's scenario name (and perturbation): the database takes
# the elements apart and writes the text. The text is built (an element is an object: "{...}"
# becomes '{"scenario": ..., ...}', the name quoted by the database's own JSON quoting), which
# on PostgreSQL took a fifth less time than merging jsonb objects. SQLite orders by position
# alone: it walks the rows in that order (the run's (run, position) index) and each row's
# elements in their array order (json_each's), where sorting by element too put every item of
# a large run through a temporary sort tree (a third of the report's time at 10,000
# scenarios); PostgreSQL sorts each row's few elements (an incremental sort).
_ITEMS_SQL = {
    "sqlite": (
        "SELECT '{{\"scenario\": ' || json_quote(r.scenario_name){perturbation_text}"
        " || CASE WHEN e.value = '{{}}' THEN '}}' ELSE ', ' || substr(e.value, 2) END"
        " FROM {table} r, json_each(r.{column}{path}) e"
        " WHERE r.run_id = %s{condition} ORDER BY r.position"
    ),
    "postgresql": (
        "SELECT '{{\"scenario\": ' || to_json(r.scenario_name)::text{perturbation_text}"
        " || CASE WHEN e.value = '{{}}'::jsonb THEN '}}' ELSE ', ' || substr(e.value::text, 2) END"
        " FROM {table} r, jsonb_array_elements(r.{column}{path}) WITH ORDINALITY e(value, n)"
        " WHERE r.run_id = %s{condition} ORDER BY r.position, e.n"
    ),
}
_QUOTE = {"sqlite": "json_quote({})", "postgresql": "to_json({})::text"}
_ITEMS = {  # (column, path in it: SQLite's, PostgreSQL's, with the row's perturbation)
    "failures": ("expectation_failures", "", "", False),
    "flips": ("flips", ", '$.slots'", " -> 'slots'", True),
}
# How the text of a value with nothing to list begins, as the result writer stores it
# (orjson's, no spaces): SQLite skips those rows without parsing them (a third of a large
# run's variants flip nothing). Any other spelling is parsed as before, so this only saves.
_NOTHING_TO_LIST = {"failures": "[]", "flips": '{"slots":[]'}


def _stored_items(run: SuiteRun, key: str) -> Iterator[list[str]]:
    """The run's failures or flips (`key`) as JSON texts, in batches of `REPORT_BATCH`, in
    the order `_failures` and `_flips` give them."""
    if connection.vendor not in _ITEMS_SQL:  # decoded and encoded again, as run_report does
        items = _failures(run) if key == "failures" else _flips(run)
        texts = (json.dumps(item) for item in items)
        while batch := list(itertools.islice(texts, REPORT_BATCH)):
            yield batch
        return
    column, sqlite_path, postgresql_path, with_perturbation = _ITEMS[key]
    nothing = _NOTHING_TO_LIST[key]
    skip = (
        f" AND substr(r.{connection.ops.quote_name(column)}, 1, {len(nothing)}) <> '{nothing}'"
        if connection.vendor == "sqlite"
        else ""
    )
    sql = _ITEMS_SQL[connection.vendor].format(
        table=connection.ops.quote_name(ScenarioResult._meta.db_table),
        column=connection.ops.quote_name(column),
        path=sqlite_path if connection.vendor == "sqlite" else postgresql_path,
        perturbation_text=(
            " || ', \"perturbation\": ' || " + _QUOTE[connection.vendor].format("r.perturbation")
            if with_perturbation
            else ""
        ),
        condition=f" AND r.{connection.ops.quote_name(column)} IS NOT NULL" + skip,
    )
    server_side = not connection.settings_dict.get("DISABLE_SERVER_SIDE_CURSORS")
    with connection.chunked_cursor() if server_side else connection.cursor() as cursor:
        cursor.execute(sql, [run.pk])
        while rows := cursor.fetchmany(REPORT_BATCH):
            yield [text for (text,) in rows]


def _may_have_failures(run: SuiteRun) -> bool:
    return run.status != SuiteRun.Status.FINISHED or bool(run.summary.get("failures", 1))


def _report_head(run: SuiteRun) -> dict[str, Any]:
    return {
        "decision_type": run.decision_type.key,
        "version": run.version.number,
        "run": run.pk,
        "status": run.status,
        "error": run.error or None,
        "contract_sha256": run.contract_sha256,
        "summary": run.summary,
    }


def _failures(run: SuiteRun) -> Iterator[dict[str, Any]]:
    rows = run.results.exclude(expectation_failures=[]).order_by("position")
    for name, failures in rows.values_list("scenario_name", "expectation_failures").iterator():
        for failure in failures:
            yield {"scenario": name, **failure}


def _flips(run: SuiteRun) -> Iterator[dict[str, Any]]:
    rows = run.results.filter(flips__isnull=False).order_by("position")
    for name, perturbation, flips in rows.values_list(
        "scenario_name", "perturbation", "flips"
    ).iterator(chunk_size=2000):
        for flip in (flips or {}).get("slots", []):  # never None: filtered out above
            yield {"scenario": name, "perturbation": perturbation, **flip}


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
