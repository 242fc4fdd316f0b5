"""How a run's result rows reach the database: one prepared INSERT, written in batches
(`ResultWriter`), the JSON columns encoded by orjson (`json_parameter`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import orjson
from django.db import connection

from .models import ScenarioResult
from .result_rows import ROW_DEFAULTS


def json_parameter() -> Callable[[Any], Any]:
    """A JSON column's value as the writer's parameter: orjson's text, which SQLite stores as
    it is and PostgreSQL's jsonb parses (the same documents as `json.dumps` gives, without
    its spaces, and several times faster on the thousands of small ones a run writes); other
    databases get the ORM's own adaptation."""
    if connection.vendor == "sqlite":
        return lambda value: orjson.dumps(value).decode()
    if connection.vendor == "postgresql":
        from psycopg.types.json import Jsonb

        return lambda value: Jsonb(value, dumps=orjson.dumps)
    return lambda value: connection.ops.adapt_json_value(value, None)


class ResultWriter:
    """Turns result rows into the parameters of one prepared INSERT and writes them in batches.

    A suite writes thousands of rows of which only the JSON columns need preparing; the ORM's
    `bulk_create` builds a statement with a placeholder per value and prepares every value,
    which cost more than the compiles themselves (see bench/sweep.py). Rows are turned into
    flat tuples of strings and numbers as soon as they are made, so the garbage collector has
    nothing to walk while they wait. The column list comes from the model, so the statement
    follows its migrations.
    """

    def __init__(self) -> None:
        fields = [f for f in ScenarioResult._meta.concrete_fields if not f.primary_key]
        quote = connection.ops.quote_name
        self.sql = "INSERT INTO {} ({}) VALUES ({})".format(
            quote(ScenarioResult._meta.db_table),
            ", ".join(quote(f.column) for f in fields),
            ", ".join(["%s"] * len(fields)),
        )
        self.columns = [(f.attname, f.get_internal_type() == "JSONField") for f in fields]
        self.adapt_json = json_parameter()
        # Defaults prepared once: most rows leave several columns at their default.
        self.defaults = {
            name: self._prepare(ROW_DEFAULTS[name], is_json)
            for name, is_json in self.columns
            if name in ROW_DEFAULTS
        }
        self.pending: list[tuple[Any, ...]] = []

    def _prepare(self, value: Any, is_json: bool) -> Any:
        # None stays SQL NULL, as the ORM stores it.
        return self.adapt_json(value) if is_json and value is not None else value

    def add(self, rows: Sequence[dict[str, Any]]) -> None:
        adapt, columns, defaults = self.adapt_json, self.columns, self.defaults
        missing = object()
        for row in rows:
            values = []
            for name, is_json in columns:
                value = row.get(name, missing)
                if value is missing:
                    values.append(defaults[name])
                elif is_json and value is not None:
                    values.append(adapt(value))
                else:
                    values.append(value)
            self.pending.append(tuple(values))

    def flush(self) -> None:
        with connection.cursor() as cursor:
            cursor.executemany(self.sql, self.pending)
        self.pending = []
