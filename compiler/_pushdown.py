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

* *eligible* rows: they pass deny, role, purpose, entity (the request's or `"*"`), expiry, the
  `superseded` flag, a `superseded_by` the table holds, and the evidence-class check. Each
  carries a flag `admitted`, true when it has also started and no successor is in force (that
  is U). The eligible rows that are not admitted are the ones
  admission calls *waiting* (not yet valid, or superseded by an item in force); `valid_until`
  needs them.
* every member of a group that has an admitted member (a member outside U blocks the others);
* the named items (a refusal names why a named item is not admissible);
* and, transitively, every row a loaded row links to through `superseded_by` or `depends_on`
  (admission reads a successor's dates; planning blocks an item whose dependency is outside U,
  and tells a dependency outside U from one absent from the table: a row the table holds must
  be loaded, or the compile would take it for absent).

Role inheritance, delegation and the entity alias are resolved in Python first (pass 2 on the
request alone), then pushed as parameters. A request the resolve or type-check pass refuses
gets a query that returns no rows: those refusals do not depend on candidates.

The query is this module's; the candidate table and each dialect's spelling are in
`compiler._pushdown_sql`, compiling the returned rows in `compiler._pushdown_rows`; callers
read all three through this module, the `compiler.pushdown` namespace.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from compiler._codes import ALL_ENTITIES, OrderRole
from compiler._errors import Refused
from compiler._input import Contract, Directory, Request
from compiler._passes.resolve import Resolution, resolve
from compiler._passes.typecheck import type_check
from compiler._pushdown_rows import (
    DIFFERING_FIELDS,
    PushdownResult,
    Row,
    admitted_ids,
    comparable,
    compile_rows,
)
from compiler._pushdown_sql import (
    COLUMNS,
    DEFAULT_TABLE,
    DIALECTS,
    Dialect,
    Fragment,
    _Lowering,
    _lowering,
    _table,
    candidate_row,
    candidate_table_ddl,
    copy_sql,
    insert_sql,
)
from compiler._trace import Trace


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
        eligible=_eligible(lowering, t, request, resolution, contract),
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
    lowering: _Lowering, t: str, request: Request, resolution: Resolution, contract: Contract
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
        Fragment("entity", f"c.entity IN ({m}, {m})", (resolution.entity, ALL_ENTITIES)),
        Fragment("not_expired", f"c.valid_to IS NULL OR c.valid_to >= {m}", (on,)),
        Fragment("not_marked_superseded", "NOT c.superseded"),
        # A successor the table does not hold supersedes for good (docs/design.md).
        Fragment(
            "successor_in_pool",
            f"c.superseded_by IS NULL OR EXISTS (SELECT 1 FROM {t} AS s"
            " WHERE s.id = c.superseded_by)",
        ),
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


# `compiler.pushdown`: the query, the candidate table and the compile of the returned rows.
__all__ = [
    "COLUMNS",
    "DEFAULT_TABLE",
    "DIALECTS",
    "DIFFERING_FIELDS",
    "Dialect",
    "Fragment",
    "Lowered",
    "PushdownResult",
    "Row",
    "admission_fragments",
    "admission_query",
    "admitted_ids",
    "assemble",
    "candidate_row",
    "candidate_table_ddl",
    "comparable",
    "compile_pushed_down",
    "compile_rows",
    "copy_sql",
    "insert_sql",
]
