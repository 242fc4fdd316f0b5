"""Predicate pushdown: the admission pass lowered to one parameterised SQL query.

The retrieval side keeps candidates in a *candidate table* (one row per candidate, see
`candidate_table_ddl`) and, instead of loading the whole pool, runs `admission_query`: the
admission predicate of one request and contract as SQL text plus parameters, for PostgreSQL or
SQLite. The rows it returns are rebuilt into candidates and compiled by the ordinary pipeline
(`compile_rows`), so the in-memory admission pass re-checks every returned row: the query only
narrows what is loaded, it never decides admission on its own (the seed's "independent
validator").

This module is pure: it imports no database driver and runs no query. It only writes SQL text
and parameters, turns candidates into rows and compiles rows; the caller executes.

What the query returns is U plus what the in-memory pipeline needs to decide exactly as it
would over the whole pool:

* *eligible* rows: they pass deny, role, purpose, entity, expiry, the `superseded` flag and the
  evidence-class check. Each carries a flag `admitted`, true when it has also started and no
  successor is in force (that is U). The eligible rows that are not admitted are the ones
  admission calls *waiting* (not yet valid, or superseded by an item in force); `valid_until`
  needs them.
* every member of a group that has an admitted member (a member outside U blocks the others);
* the named items (a refusal names why a named item is not admissible);
* and, transitively, every row a loaded row links to through `superseded_by` or `depends_on`
  (admission reads a successor's dates; planning blocks an item whose dependency is outside U;
  validation needs every reference to resolve).

Role inheritance, delegation and the entity alias are resolved in Python first (pass 2 on the
request alone), then pushed as parameters. A request the resolve or type-check pass refuses
gets a query that returns no rows: those refusals do not depend on candidates.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from .codes import OrderRole, Outcome, Pass
from .errors import Refused
from .loading import load_input
from .models import Candidate, CompileOutput, Contract, Directory, Request
from .pipeline import compile_input
from .resolve import Resolution, resolve
from .trace import Trace
from .typecheck import type_check

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

DIFFERING_FIELDS: tuple[str, ...] = ("rejected", "trace")
"""The output fields a pushed-down compile may not share with a compile of the whole pool:
candidates the query does not return are neither traced nor listed as rejected. Every other
field (packet, slots, plan id, valid_until, blocking, refusal...) is the same."""

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


# --------------------------------------------------------------------------- the table


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


# --------------------------------------------------------------------------- the query


class Fragment(NamedTuple):
    """One named piece of the query with its own parameters, in placeholder order."""

    name: str
    sql: str
    params: tuple[Any, ...] = ()


@dataclass(frozen=True, slots=True)
class Lowered:
    """The admission predicate of one request and contract, as named SQL fragments over `c`."""

    dialect: Dialect
    table: str
    eligible: tuple[Fragment, ...]
    """Conditions (ANDed) on a row for it to be admitted now or waiting."""
    admitted: tuple[Fragment, ...]
    """Conditions (ANDed) that make an eligible row admitted now."""
    companions: tuple[Fragment, ...]
    """SELECTs of further ids the in-memory pipeline needs (over the CTE `eligible`)."""


def admission_fragments(
    request: Request,
    contract: Contract,
    dialect: Dialect,
    *,
    directory: Directory | None = None,
    table: str = DEFAULT_TABLE,
) -> Lowered | None:
    """The predicate as fragments, or None when the request is refused before admission."""
    lowering = _lowering(dialect)
    t = _table(table)
    try:
        resolution = resolve(request, directory or Directory(), Trace())
        type_check(request, contract, Trace())
    except Refused:
        return None
    return Lowered(
        dialect=dialect,
        table=t,
        eligible=_eligible(lowering, request, resolution, contract),
        admitted=_admitted_now(lowering, t, request),
        companions=_companions(lowering, t, request),
    )


def admission_query(
    request: Request,
    contract: Contract,
    dialect: Dialect,
    *,
    directory: Directory | None = None,
    table: str = DEFAULT_TABLE,
) -> tuple[str, list[Any]]:
    """(sql, params) selecting `(document, admitted)` for every row the compile needs.

    `admitted` is the query's own verdict (true for U); the compile re-decides it.
    """
    lowered = admission_fragments(request, contract, dialect, directory=directory, table=table)
    if lowered is None:
        return f"SELECT document, (1 = 0) AS admitted FROM {_table(table)} WHERE 1 = 0", []
    return assemble(lowered)


def assemble(lowered: Lowered) -> tuple[str, list[Any]]:
    lowering = _lowering(lowered.dialect)
    t = lowered.table
    params: list[Any] = []

    def conjunction(fragments: Sequence[Fragment]) -> str:
        for f in fragments:
            params.extend(f.params)
        return " AND ".join(f"({f.sql})" for f in fragments) or "1 = 1"

    admitted = conjunction(lowered.admitted)
    eligible = conjunction(lowered.eligible)
    seeds = ["SELECT id FROM eligible"]
    for f in lowered.companions:
        seeds.append(f.sql)
        params.extend(f.params)
    seed_union = "\n        UNION ".join(seeds)
    false = "FALSE" if lowering.postgres else "0"
    sql = (
        "WITH RECURSIVE eligible AS (\n"
        f"    SELECT c.id, c.group_name, ({admitted}) AS admitted\n"
        f"    FROM {t} AS c\n"
        f"    WHERE {eligible}\n"
        "), seed(id) AS (\n"
        f"    {seed_union}\n"
        "), needed(id) AS (\n"
        "    SELECT id FROM seed\n"
        "    UNION\n"
        f"    {lowering.links_step(t)}\n"
        ")\n"
        # PostgreSQL cannot estimate a recursive CTE (it assumes hundreds of thousands of rows
        # here) and would hash-join it against the whole table, JIT-compiling the plan on the
        # way; an id list behind `= ANY(ARRAY(...))` is costed as a handful of index probes.
        f"SELECT c.document, COALESCE(e.admitted, {false}) AS admitted\n"
        f"FROM {t} AS c LEFT JOIN eligible AS e ON e.id = c.id\n"
        f"WHERE {lowering.among('c.id', 'SELECT id FROM needed')}"
    )
    return sql, params


def _eligible(
    lowering: _Lowering, request: Request, resolution: Resolution, contract: Contract
) -> tuple[Fragment, ...]:
    parties = {request.principal}
    if request.delegation is not None:
        parties.add(request.delegation.service)
    # Deny dominates across the delegation join: the principal's own roles still deny.
    deny_roles = resolution.effective_roles | resolution.principal_roles
    m = lowering.mark
    on = request.decision_date.isoformat() if not lowering.postgres else request.decision_date
    return (
        _negated("not_denied_principal", lowering.any_of("c.denied_principals", parties)),
        _negated("not_denied_role", lowering.any_of("c.denied_roles", deny_roles)),
        lowering.any_of("c.allowed_roles", resolution.effective_roles)._replace(name="role"),
        lowering.has("c.allowed_purposes", request.purpose)._replace(name="purpose"),
        Fragment("entity", f"c.entity = {m}", (resolution.entity,)),
        Fragment("not_expired", f"c.valid_to IS NULL OR c.valid_to >= {m}", (on,)),
        Fragment("not_marked_superseded", "NOT c.superseded"),
        _evidence_class(lowering, contract),
    )


def _evidence_class(lowering: _Lowering, contract: Contract) -> Fragment:
    """A row speaking to contract propositions needs one that accepts its class; a row that
    speaks to none passes only when it is context (its role is not evidence)."""
    by_class: dict[str, set[str]] = {}
    for p in contract.propositions:
        for cls in p.accepted_classes:
            by_class.setdefault(cls, set()).add(p.key)
    keys = {p.key for p in contract.propositions}
    speaks = lowering.any_of("c.claims", keys)
    parts = [f"(c.role <> {lowering.mark} AND NOT {speaks.sql})"]
    params: list[Any] = [OrderRole.EVIDENCE.value, *speaks.params]
    for cls in sorted(by_class):
        accepted = lowering.any_of("c.claims", by_class[cls])
        parts.append(f"(c.evidence_class = {lowering.mark} AND {accepted.sql})")
        params.extend((cls, *accepted.params))
    return Fragment("evidence_class", " OR ".join(parts), tuple(params))


def _admitted_now(lowering: _Lowering, t: str, request: Request) -> tuple[Fragment, ...]:
    m = lowering.mark
    on = request.decision_date.isoformat() if not lowering.postgres else request.decision_date
    return (
        Fragment("started", f"c.valid_from <= {m}", (on,)),
        Fragment(
            "no_successor_in_force",
            f"NOT EXISTS (SELECT 1 FROM {t} AS s WHERE s.id = c.superseded_by"
            f" AND s.valid_from <= {m} AND (s.valid_to IS NULL OR s.valid_to >= {m}))",
            (on, on),
        ),
    )


def _companions(lowering: _Lowering, t: str, request: Request) -> tuple[Fragment, ...]:
    out = [
        Fragment(
            "group_members",
            f"SELECT m.id FROM {t} AS m WHERE m.group_name IN"
            " (SELECT group_name FROM eligible WHERE admitted AND group_name IS NOT NULL)",
        )
    ]
    if request.named:
        named = lowering.member("n.id", request.named)
        out.append(Fragment("named", f"SELECT n.id FROM {t} AS n WHERE {named.sql}", named.params))
    return tuple(out)


def _negated(name: str, fragment: Fragment) -> Fragment:
    return Fragment(name, f"NOT {fragment.sql}", fragment.params)


# --------------------------------------------------------------------------- dialects


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


# --------------------------------------------------------------------------- compiling rows


@dataclass(frozen=True, slots=True)
class PushdownResult:
    output: CompileOutput
    loaded: int
    """How many rows the query returned."""
    pushed_admitted: frozenset[str]
    """The ids the query itself flagged admitted."""
    admitted: frozenset[str] | None
    """U as the in-memory admission pass found it on the loaded rows (None: the request was
    refused before admission)."""

    @property
    def mismatched(self) -> frozenset[str]:
        """Ids on which the query and the in-memory check disagree (the seed's "permission
        mismatch at independent validation"): always empty unless the adapter is wrong."""
        if self.admitted is None:
            return frozenset()
        return self.pushed_admitted ^ self.admitted


Row = tuple[str, Any]
"""(document, admitted) as the query returns it."""


def compile_rows(
    request: Request,
    contract: Contract,
    rows: Iterable[Row],
    *,
    directory: Directory | None = None,
) -> PushdownResult:
    """Rebuild candidates from the query's rows and compile them with the normal pipeline.

    The rows go through the same validation and admission as any input: a row the query should
    not have returned is rejected as usual, never trusted. Request, contract and directory are
    validated again from their JSON form, so the cross-checks that span them (an expected
    policy) run exactly as for a whole document.
    """
    candidates: list[Any] = []
    pushed: set[str] = set()
    for document, flagged in rows:
        candidate = json.loads(document)
        candidates.append(candidate)
        if flagged:
            pushed.add(candidate["id"])
    compiled = load_input(
        {
            "request": request.model_dump(mode="json"),
            "contract": contract.model_dump(mode="json"),
            "directory": (directory or Directory()).model_dump(mode="json"),
            "candidates": candidates,
        }
    )
    output = compile_input(compiled)
    return PushdownResult(output, len(candidates), frozenset(pushed), admitted_ids(output))


def compile_pushed_down(
    request: Request,
    contract: Contract,
    dialect: Dialect,
    execute: Callable[[str, list[Any]], Iterable[Row]],
    *,
    directory: Directory | None = None,
    table: str = DEFAULT_TABLE,
) -> PushdownResult:
    """Lower, let `execute` run the query on the retrieval side, and compile what it returns."""
    sql, params = admission_query(request, contract, dialect, directory=directory, table=table)
    return compile_rows(request, contract, execute(sql, params), directory=directory)


def admitted_ids(output: CompileOutput) -> frozenset[str] | None:
    """U from a compile's trace, or None when the compile was refused before admission."""
    checked = False
    admitted: set[str] = set()
    for entry in output.trace:
        if entry["pass"] == Pass.TYPE_CHECK.value and entry["outcome"] == Outcome.CHECKED.value:
            checked = True
        elif entry["pass"] == Pass.ADMIT.value and entry["outcome"] == Outcome.ADMITTED.value:
            admitted.add(str(entry["id"]))
    return frozenset(admitted) if checked else None


def comparable(output: CompileOutput) -> dict[str, Any]:
    """The output as JSON without the fields a pushed-down compile legitimately differs in."""
    return output.model_dump(mode="json", by_alias=True, exclude=set(DIFFERING_FIELDS))
