"""How a run's result rows reach the database: one prepared INSERT, written in batches
(`ResultWriter`), the JSON columns encoded by orjson."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from django.db import connection

from .models import ScenarioResult, SuiteRunReportPiece
from .result_rows import ROW_DEFAULTS, json_text
from .run_groups import GroupTally
from .stored_reports import ITEM_SEPARATOR, piece_items


class ResultWriter:
    """Turns result rows into the parameters of one prepared INSERT and writes them in batches.

    A suite writes thousands of rows of which only the JSON columns need preparing; the ORM's
    `bulk_create` builds a statement with a placeholder per value and prepares every value,
    which cost more than the compiles themselves (see bench/sweep.py). Rows are turned into
    flat tuples of strings and numbers as soon as they are made, so the garbage collector has
    nothing to walk while they wait. The column list comes from the model, so the statement
    follows its migrations. Each row is also counted into `groups` (`run_groups.GroupTally`,
    if the chunk keeps one) by the texts of its slot states and verdict counts, as they are
    stored, and its report items are written with it, one piece a flush (`stored_reports`).
    """

    def __init__(self, groups: GroupTally | None = None) -> None:
        fields = [f for f in ScenarioResult._meta.concrete_fields if not f.primary_key]
        quote = connection.ops.quote_name
        # PostgreSQL is sent the JSON columns' text and casts it (jsonb parses it once).
        as_json = "%s::jsonb" if connection.vendor == "postgresql" else "%s"
        self.sql = "INSERT INTO {} ({}) VALUES ({})".format(
            quote(ScenarioResult._meta.db_table),
            # A concrete field always has its column (`Field.concrete` says as much).
            ", ".join(quote(cast(str, f.column)) for f in fields),
            ", ".join(as_json if _is_json(f) else "%s" for f in fields),
        )
        self.columns = [(f.attname, _is_json(f)) for f in fields]
        names = [name for name, _ in self.columns]
        self._states, self._counts = names.index("slot_states"), names.index("verdict_counts")
        # Defaults prepared once: most rows leave several columns at their default.
        self.defaults = {
            name: self._prepare(ROW_DEFAULTS[name], is_json)
            for name, is_json in self.columns
            if name in ROW_DEFAULTS
        }
        self.groups = groups
        self.pending: list[tuple[Any, ...]] = []
        self._failures: list[str] = []
        self._flips: list[str] = []
        self._piece: dict[str, int] = {}  # run, first position and scenarios of the next piece
        self._name: tuple[str | None, str] = (None, "")  # the last row's scenario name, as JSON

    @staticmethod
    def _prepare(value: Any, is_json: bool) -> Any:
        # None stays SQL NULL, as the ORM stores it.
        return json_text(value) if is_json and value is not None else value

    def add(self, rows: Sequence[dict[str, Any]]) -> None:
        columns, defaults, groups = self.columns, self.defaults, self.groups
        missing = object()
        for row in rows:
            values = []
            for name, is_json in columns:
                value = row.get(name, missing)
                if value is missing:
                    values.append(defaults[name])
                elif is_json and value is not None:
                    values.append(json_text(value))
                else:
                    values.append(value)
            is_base = not row.get("perturbation")
            if groups is not None:
                arguments = row.get("perturbation_args") or {}
                operator = None if is_base else arguments.get("operator") or ""
                groups.count(operator, values[self._counts], values[self._states], row["position"])
            self.pending.append(tuple(values))
            if row["scenario_name"] != self._name[0]:
                self._name = (row["scenario_name"], json_text(row["scenario_name"]))
            failures, flips = piece_items(row, self._name[1])
            self._failures += failures
            self._flips += flips
            if not self._piece:
                self._piece = {"run_id": row["run_id"], "first": row["position"], "scenarios": 0}
            self._piece["scenarios"] += is_base  # a scenario's one row without a perturbation

    def kept_groups(self) -> dict[str, Any] | None:
        """The chunk's tally of every row it stored, as `SuiteRunChunk.groups` keeps it; None
        for a chunk that keeps none."""
        return self.groups.to_json() if self.groups is not None else None

    def flush(self) -> None:
        """Write the rows added since the last flush, and their report piece."""
        if not self.pending:
            return
        with connection.cursor() as cursor:
            cursor.executemany(self.sql, self.pending)
        SuiteRunReportPiece.objects.create(
            **self._piece,
            failures=ITEM_SEPARATOR.join(self._failures),
            flips=ITEM_SEPARATOR.join(self._flips),
        )
        self.pending, self._failures, self._flips, self._piece = [], [], [], {}


def _is_json(field: Any) -> bool:
    return field.get_internal_type() == "JSONField"
