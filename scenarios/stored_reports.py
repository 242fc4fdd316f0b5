"""A run's JSON report, kept as its rows are committed.

`selectors.run_report_stream` gives a run's summary, failures and flips. The result writer
(`scenarios.result_writer`) turns each row's failures and flips into the report's items as
it prepares the row, and writes them with the rows of each commit, in the same transaction,
as one `SuiteRunReportPiece` (`piece_items`). A finished run whose pieces cover every one of
its scenarios has its report put together from them in row order (`from_pieces`), so
finishing a run reads none of its rows back, and a report is never taken apart from the rows
again. Any other run's report — running, failed, or with scenarios stored before pieces were
kept — is written from its rows (`selectors.reports.report_from_rows`). A run finished when
reports were written whole as it finished reads those parts back (`SuiteRunReportPart`).

An item is the JSON object the report lists, headed by its row's scenario name (and, for a
flip, the perturbation's), as `report_from_rows` writes it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from django.db.models import Sum

from .models import SuiteRun
from .result_rows import json_text

# How the report separates its items: `report_from_rows`' layout.
ITEM_SEPARATOR = ",\n    "


def piece_items(row: Mapping[str, Any], name: str | None = None) -> tuple[list[str], list[str]]:
    """The report's failure and flip items of one result row, as JSON texts; `name`, the
    row's scenario name as JSON, if the caller has it (a scenario's rows share it)."""
    name = name or json_text(row["scenario_name"])
    failures = [_item(f'{{"scenario": {name}', f) for f in row.get("expectation_failures") or ()]
    slots: Sequence[Mapping[str, Any]] = (row.get("flips") or {}).get("slots") or ()
    if not slots:
        return failures, []
    head = f'{{"scenario": {name}, "perturbation": {json_text(row.get("perturbation", ""))}'
    return failures, [_item(head, slot) for slot in slots]


def _item(head: str, value: Mapping[str, Any]) -> str:
    text = json_text(value)
    return head + "}" if text == "{}" else f"{head}, {text[1:]}"


def has_pieces(run: SuiteRun) -> bool:
    """Whether the finished run's pieces cover every one of its scenarios."""
    if run.status != SuiteRun.Status.FINISHED:
        return False
    covered = run.report_pieces.aggregate(scenarios=Sum("scenarios"))["scenarios"]
    return covered is not None and covered == run.total


def from_pieces(run: SuiteRun, head: str) -> Iterator[str]:
    """The report from its pieces: `head` (the report's opening, up to its failures), then
    every piece's failures and every piece's flips, in row order, a piece at a time."""
    yield head
    pieces = run.report_pieces.order_by("first")
    for key in ("failures", "flips"):
        if key == "flips":
            yield '],\n  "flips": ['
        separator = "\n    "
        for text in pieces.exclude(**{key: ""}).values_list(key, flat=True).iterator(chunk_size=1):
            yield separator + text
            separator = ITEM_SEPARATOR
    yield "]\n}\n"
