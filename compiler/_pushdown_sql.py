"""The candidate table of predicate pushdown (`compiler.pushdown`): its DDL, the row of one
candidate, the statements that load it, and how each dialect spells what the query needs.
Pure: it writes SQL text and parameters, and runs nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any, Literal, NamedTuple

from compiler._input import Candidate

Dialect = Literal["postgresql", "sqlite"]
DIALECTS: tuple[str, ...] = ("postgresql", "sqlite")
DEFAULT_TABLE = "candidate"

COLUMNS: tuple[str, ...] = (
    "id",
    "entity",
    "evidence_class",
    "role",
    "valid_from",
    "valid_to",
    "superseded",
    "superseded_by",
    "group_name",
    "allowed_roles",
    "allowed_purposes",
    "denied_roles",
    "denied_principals",
    "claims",
    "links",
    "document",
)
"""The candidate table's columns, in the order `candidate_row` fills them."""


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def candidate_table_ddl(dialect: Dialect, table: str = DEFAULT_TABLE) -> list[str]:
    """CREATE TABLE and CREATE INDEX statements for the candidate table, in that order.

    One row per candidate. Scalar predicate fields are columns; list-valued ones are JSON
    arrays of strings (`jsonb` in PostgreSQL, TEXT holding JSON in SQLite); `claims` is
    supports ∪ contradicts, `links` is superseded_by followed by depends_on. `document` is the
    whole candidate as JSON, which is what the compiler rebuilds and re-checks. Dates are
    `date` in PostgreSQL and ISO `YYYY-MM-DD` TEXT in SQLite (which compares in date order).
    The first statement creates the table; a bulk load can run it, load, then the indexes.

    PostgreSQL text cannot hold U+0000, so a candidate with that character in an identifier or
    role cannot be stored (the `document` column escapes it and is unaffected).
    """
    lowering = _lowering(dialect)
    t = _table(table)
    j, d = lowering.json_type, lowering.date_type
    boolean = "boolean" if lowering.postgres else "INTEGER"
    return [
        f"CREATE TABLE {t} (\n"
        f"    id text PRIMARY KEY,\n"
        f"    entity text NOT NULL,\n"
        f"    evidence_class text NOT NULL,\n"
        f"    role text NOT NULL,\n"
        f"    valid_from {d} NOT NULL,\n"
        f"    valid_to {d},\n"
        f"    superseded {boolean} NOT NULL,\n"
        f"    superseded_by text,\n"
        f"    group_name text,\n"
        f"    allowed_roles {j} NOT NULL,\n"
        f"    allowed_purposes {j} NOT NULL,\n"
        f"    denied_roles {j} NOT NULL,\n"
        f"    denied_principals {j} NOT NULL,\n"
        f"    claims {j} NOT NULL,\n"
        f"    links {j} NOT NULL,\n"
        f"    document text NOT NULL\n"
        f")",
        f"CREATE INDEX {t}_entity ON {t} (entity)",
        f"CREATE INDEX {t}_group ON {t} (group_name) WHERE group_name IS NOT NULL",
    ]


def candidate_row(candidate: Candidate) -> tuple[Any, ...]:
    """The row of one validated candidate, in `COLUMNS` order, for either database.

    Dates are ISO strings, lists JSON text and `superseded` a bool, so the same tuple suits an
    SQLite insert, a PostgreSQL insert and a PostgreSQL COPY.
    """
    c = candidate
    links = ([c.superseded_by] if c.superseded_by is not None else []) + list(c.depends_on)
    return (
        c.id,
        c.entity,
        c.evidence_class,
        str(c.role),
        c.valid_from.isoformat(),
        None if c.valid_to is None else c.valid_to.isoformat(),
        bool(c.superseded),
        c.superseded_by,
        c.group,
        _json(c.allowed_roles),
        _json(c.allowed_purposes),
        _json(c.denied_roles),
        _json(c.denied_principals),
        _json(sorted({*c.supports, *c.contradicts})),
        _json(links),
        c.model_dump_json(exclude_defaults=True),
    )


def insert_sql(dialect: Dialect, table: str = DEFAULT_TABLE) -> str:
    """An INSERT of one `candidate_row` (for executemany)."""
    lowering = _lowering(dialect)
    marks = ", ".join(lowering.mark for _ in COLUMNS)
    return f"INSERT INTO {_table(table)} ({', '.join(COLUMNS)}) VALUES ({marks})"


def copy_sql(table: str = DEFAULT_TABLE) -> str:
    """PostgreSQL COPY of `candidate_row` tuples (text format)."""
    return f"COPY {_table(table)} ({', '.join(COLUMNS)}) FROM STDIN"


class Fragment(NamedTuple):
    """One named piece of the query with its own parameters, in placeholder order."""

    name: str
    sql: str
    params: tuple[Any, ...] = ()


class _Lowering:
    """How one dialect spells the few operations the query needs."""

    def __init__(self, postgres: bool) -> None:
        self.postgres = postgres
        self.mark = "%s" if postgres else "?"
        self.json_type = "jsonb" if postgres else "TEXT"
        self.date_type = "date" if postgres else "TEXT"

    def strings(self, values: Iterable[str]) -> Any:
        ordered = sorted(set(values))
        return ordered if self.postgres else _json(ordered)

    def any_of(self, column: str, values: Iterable[str]) -> Fragment:
        """The JSON array in `column` holds one of `values`."""
        if self.postgres:
            return Fragment("", f"{column} ?| %s::text[]", (self.strings(values),))
        return Fragment(
            "",
            f"EXISTS (SELECT 1 FROM json_each({column}) AS e"
            " WHERE e.value IN (SELECT value FROM json_each(?)))",
            (self.strings(values),),
        )

    def has(self, column: str, value: str) -> Fragment:
        if self.postgres:
            return Fragment("", f"{column} ? %s", (value,))
        return Fragment(
            "", f"EXISTS (SELECT 1 FROM json_each({column}) AS e WHERE e.value = ?)", (value,)
        )

    def member(self, expression: str, values: Iterable[str]) -> Fragment:
        if self.postgres:
            return Fragment("", f"{expression} = ANY(%s::text[])", (self.strings(values),))
        return Fragment(
            "", f"{expression} IN (SELECT value FROM json_each(?))", (self.strings(values),)
        )

    def among(self, expression: str, subquery: str) -> str:
        if self.postgres:
            return f"{expression} = ANY(ARRAY({subquery}))"
        return f"{expression} IN ({subquery})"

    def links_step(self, t: str) -> str:
        """The recursive step: every id a needed row links to."""
        if self.postgres:
            return (
                f"SELECT link FROM needed AS n JOIN {t} AS c ON c.id = n.id"
                " CROSS JOIN LATERAL jsonb_array_elements_text(c.links) AS link"
            )
        return (
            f"SELECT l.value FROM needed AS n JOIN {t} AS c ON c.id = n.id, json_each(c.links) AS l"
        )


def _lowering(dialect: str) -> _Lowering:
    if dialect not in DIALECTS:
        raise ValueError(f"dialect must be one of {', '.join(DIALECTS)}, not {dialect!r}")
    return _Lowering(postgres=dialect == "postgresql")


def _table(name: str) -> str:
    if not _IDENTIFIER.fullmatch(name):
        raise ValueError(f"table name {name!r} is not a plain SQL identifier")
    return name


def _json(values: Iterable[str]) -> str:
    return json.dumps(list(values), ensure_ascii=False, separators=(",", ":"))
