"""Conformance of the SQL pushdown adapter (compiler/_pushdown.py) on SQLite and PostgreSQL.

The adapter is judged by what it admits, not by its query text: on generated corpora the
query's admitted set must equal the in-memory U of a compile over the whole pool, and a compile
of the rows it returns must give the same output as that compile, apart from the trace and the
rejection list (candidates the query does not return are neither traced nor rejected). A table
of mutations over the query's fragments shows that the check catches an adapter bug.

PostgreSQL runs in a scratch database created for the session and dropped afterwards
(PUSHDOWN_POSTGRES_URL, default postgres://postgres@127.0.0.1:5432/postgres, names the server);
those tests skip, saying so, only when no server answers.
"""

from __future__ import annotations

import dataclasses
import os
import sqlite3
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from evidence_factories import candidate, delegation, document
from hypothesis import given
from test_compiler_properties import ANY_DOC, SETTINGS

from compiler import Candidate, CompileInput, InvalidInput, compile_input, load_input, pushdown

POSTGRES_URL = os.environ.get(
    "PUSHDOWN_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres"
)


class SqliteStore:
    dialect = "sqlite"

    def __init__(self) -> None:
        self.connection = sqlite3.connect(":memory:")
        for statement in pushdown.candidate_table_ddl("sqlite"):
            self.connection.execute(statement)

    def load(self, candidates: Sequence[Candidate]) -> None:
        with self.connection:
            self.connection.execute(f"DELETE FROM {pushdown.DEFAULT_TABLE}")
            self.connection.executemany(
                pushdown.insert_sql("sqlite"), [pushdown.candidate_row(c) for c in candidates]
            )

    def execute(self, sql: str, params: list[Any]) -> list[tuple[str, Any]]:
        return self.connection.execute(sql, params).fetchall()


class PostgresStore:
    dialect = "postgresql"

    def __init__(self, connection: Any) -> None:
        self.connection = connection
        for statement in pushdown.candidate_table_ddl("postgresql"):
            connection.execute(statement)

    def load(self, candidates: Sequence[Candidate]) -> None:
        with self.connection.cursor() as cursor:
            cursor.execute(f"TRUNCATE {pushdown.DEFAULT_TABLE}")
            cursor.executemany(
                pushdown.insert_sql("postgresql"), [pushdown.candidate_row(c) for c in candidates]
            )

    def execute(self, sql: str, params: list[Any]) -> list[tuple[str, Any]]:
        return self.connection.execute(sql, params).fetchall()


@pytest.fixture(scope="session")
def postgres_store() -> Iterator[PostgresStore]:
    psycopg = pytest.importorskip("psycopg")
    try:
        admin = psycopg.connect(POSTGRES_URL, autocommit=True, connect_timeout=3)
    except psycopg.OperationalError as exc:
        pytest.skip(f"no PostgreSQL server answers at {POSTGRES_URL}: {exc}")
    name = f"wt_pushdown_test_{uuid.uuid4().hex[:12]}"
    admin.execute(f"CREATE DATABASE {name}")
    try:
        url = POSTGRES_URL.rsplit("/", 1)[0] + f"/{name}"
        with psycopg.connect(url, autocommit=True) as connection:
            yield PostgresStore(connection)
    finally:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.close()


@pytest.fixture(scope="session")
def sqlite_store() -> SqliteStore:
    return SqliteStore()


@pytest.fixture(scope="session", params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest) -> SqliteStore | PostgresStore:
    return request.getfixturevalue(f"{request.param}_store")


def differences(doc: dict[str, Any], store: SqliteStore | PostgresStore) -> list[str]:
    """Every way the pushed-down compile departs from compiling the whole pool in memory."""
    whole = load_input(doc)
    expected = compile_input(whole)
    store.load(whole.candidates)
    try:
        result = pushdown.compile_pushed_down(
            whole.request,
            whole.contract,
            store.dialect,
            store.execute,
            directory=whole.directory,
        )
    except InvalidInput as exc:
        return [f"the returned rows are not a valid input: {exc}"]
    problems = []
    universe = pushdown.admitted_ids(expected)
    if result.pushed_admitted != (universe or frozenset()):
        problems.append(
            f"query admits {sorted(result.pushed_admitted)}, U is {sorted(universe or ())}"
        )
    if result.mismatched:
        problems.append(f"the in-memory check disagrees on {sorted(result.mismatched)}")
    if pushdown.comparable(result.output) != pushdown.comparable(expected):
        problems.append("the compiled output differs")
    # A loaded row is rejected for the same reason as in the whole pool: a row the table holds
    # but the query failed to load would make its dependents `dependency_absent` instead.
    whole_pool = {r["id"]: dict(r) for r in expected.rejected}
    wrong = [dict(r) for r in result.output.rejected if whole_pool.get(r["id"]) != dict(r)]
    if wrong:
        problems.append(f"rejected otherwise than over the whole pool: {wrong}")
    return problems


# --------------------------------------------------------------------------- conformance


@SETTINGS
@given(ANY_DOC)
def test_pushed_down_admitted_set_and_output_equal_the_whole_pool_compile(store, doc):
    assert differences(doc, store) == []


def corpus() -> dict[str, Any]:
    """One candidate per way to fail admission, beside admitted ones, a group with a member of
    another entity, a candidate that is not valid yet, one superseded by an item in force and one
    by an item the table does not hold."""
    return document(
        candidate("ok"),
        candidate("denied-principal", denied_principals=["maya"]),
        candidate("denied-role", denied_roles=["credit_analyst"]),
        candidate("no-role", allowed_roles=["ops"]),
        candidate("no-purpose", allowed_purposes=["marketing"]),
        candidate("elsewhere", entity="BOREAL-02"),
        candidate("expired", valid_to="2026-01-31"),
        candidate("flagged", superseded=True),
        candidate("weak", evidence_class="email"),
        candidate("later", valid_from="2026-09-15"),
        candidate("old", superseded_by="new"),
        candidate("new", valid_from="2026-06-01"),
        candidate("replaced-unseen", superseded_by="not-retrieved"),
        candidate("grouped", group="pair", relevance=0.9),
        candidate("grouped-elsewhere", group="pair", entity="BOREAL-02"),
        token_budget=150,
    )


def named_corpus() -> dict[str, Any]:
    return document(
        candidate("ok"), candidate("elsewhere", entity="BOREAL-02"), named=["elsewhere"]
    )


def delegated_corpus() -> dict[str, Any]:
    """Role inheritance, an entity alias and a delegation that narrows the principal's roles;
    a deny on a role the delegation leaves out, or on the service, still applies."""
    return document(
        candidate("inherited", allowed_roles=["credit_staff"]),
        candidate("out-of-scope", allowed_roles=["financial_crime"]),
        candidate("denied-own-role", denied_roles=["financial_crime"]),
        candidate("denied-service", denied_principals=["review-bot"]),
        roles=["credit_analyst", "financial_crime"],
        entity="Atlas",
        delegation=delegation(scopes=["credit_analyst", "credit_staff"]),
        directory={
            "entities": {"ATLAS-IN-01": ["Atlas"]},
            "role_parents": {"credit_analyst": ["credit_staff"]},
        },
    )


def open_corpus() -> dict[str, Any]:
    """A retriever's pool: items for every entity (one of them denied to the caller), and
    references to ids the table does not hold beside ones it holds but does not admit."""
    return document(
        candidate("ok"),
        candidate("for-everyone", entity="*", relevance=0.9),
        candidate("for-everyone-denied", entity="*", denied_principals=["maya"]),
        candidate("for-everyone-expired", entity="*", valid_to="2026-01-31"),
        candidate("replaced-unseen", superseded_by="policy-not-retrieved", relevance=1.0),
        candidate("needs-unseen", depends_on=["annex-not-retrieved"], relevance=1.0),
        candidate("needs-elsewhere", depends_on=["elsewhere"], relevance=1.0),
        candidate("elsewhere", entity="BOREAL-02"),
        candidate("grouped", group="pair", depends_on=["also-not-retrieved"]),
        candidate("grouped-too", group="pair"),
    )


CORPORA = [corpus, named_corpus, delegated_corpus, open_corpus]


@pytest.mark.parametrize("make_corpus", CORPORA, ids=lambda f: f.__name__)
def test_the_handwritten_corpora_conform(store, make_corpus):
    doc = make_corpus()
    assert differences(doc, store) == []
    assert pushdown.admitted_ids(compile_input(load_input(doc))), "U should not be empty"


TRUE, FALSE = "1 = 1", "1 = 0"
CONDITION_NAMES = [
    ("eligible", name)
    for name in (
        "not_denied_principal",
        "not_denied_role",
        "role",
        "purpose",
        "entity",
        "not_expired",
        "not_marked_superseded",
        "successor_in_pool",
        "evidence_class",
    )
] + [("admitted", "started"), ("admitted", "no_successor_in_force")]


def _replace(part: str, name: str, sql: str | None):
    def mutate(lowered: pushdown.Lowered) -> pushdown.Lowered:
        fragments = [
            f if f.name != name else (None if sql is None else pushdown.Fragment(name, sql))
            for f in getattr(lowered, part)
        ]
        assert any(f is None or f.sql == sql for f in fragments), f"no fragment {name}"
        return dataclasses.replace(lowered, **{part: tuple(f for f in fragments if f)})

    return mutate


def _wait_only_for_the_start() -> Any:
    """Move `started` from the admitted flag into eligibility: the not-yet-valid candidates
    are no longer loaded, so the compile cannot see when U next changes."""

    def mutate(lowered: pushdown.Lowered) -> pushdown.Lowered:
        started = next(f for f in lowered.admitted if f.name == "started")
        return dataclasses.replace(lowered, eligible=(*lowered.eligible, started))

    return mutate


MUTATIONS = {
    **{f"widen {name}": (_replace(part, name, TRUE), corpus) for part, name in CONDITION_NAMES},
    **{f"narrow {name}": (_replace(part, name, FALSE), corpus) for part, name in CONDITION_NAMES},
    "drop group_members": (_replace("companions", "group_members", None), corpus),
    "drop named": (_replace("companions", "named", None), named_corpus),
    "widen not_denied_role under delegation": (
        _replace("eligible", "not_denied_role", TRUE),
        delegated_corpus,
    ),
    "widen not_denied_principal under delegation": (
        _replace("eligible", "not_denied_principal", TRUE),
        delegated_corpus,
    ),
    "narrow role under delegation": (_replace("eligible", "role", FALSE), delegated_corpus),
    "drop waiting": (_wait_only_for_the_start(), corpus),
    "entity without every entity": (
        _replace("eligible", "entity", "c.entity = 'ATLAS-IN-01'"),
        open_corpus,
    ),
}


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_every_mutation_of_the_query_fails_conformance(store, monkeypatch, mutation):
    mutate, make_corpus = MUTATIONS[mutation]
    lower = pushdown.admission_fragments

    def mutated(*args: Any, **kwargs: Any) -> pushdown.Lowered | None:
        lowered = lower(*args, **kwargs)
        return None if lowered is None else mutate(lowered)

    monkeypatch.setattr(pushdown, "admission_fragments", mutated)
    assert differences(make_corpus(), store) != []


# --------------------------------------------------------------------------- the validator


def test_a_row_the_query_should_not_return_is_rejected_not_trusted(sqlite_store):
    """The in-memory admission re-checks every row: a forbidden row that a broken retrieval
    side returns (and even flags admitted) stays out of the packet and is reported."""
    whole = load_input(corpus())
    expected = compile_input(whole)
    sqlite_store.load(whole.candidates)
    forbidden = next(c for c in whole.candidates if c.id == "denied-principal")

    def leaky(sql: str, params: list[Any]) -> list[tuple[str, Any]]:
        return [*sqlite_store.execute(sql, params), (forbidden.model_dump_json(), True)]

    result = pushdown.compile_pushed_down(
        whole.request, whole.contract, "sqlite", leaky, directory=whole.directory
    )
    assert "denied-principal" not in result.output.packet_ids
    assert result.mismatched == {"denied-principal"}
    assert pushdown.comparable(result.output) == pushdown.comparable(expected)
    assert {"id": "denied-principal", "reason": "not_authorised", "detail": "denied"} in list(
        result.output.rejected
    )


def test_a_request_refused_before_admission_loads_nothing_and_refuses_the_same(store):
    doc = document(
        candidate("ok"), entity="Nobody Known", directory={"entities": {"ATLAS-IN-01": ["Atlas"]}}
    )
    whole = load_input(doc)
    store.load(whole.candidates)
    result = pushdown.compile_pushed_down(
        whole.request, whole.contract, store.dialect, store.execute, directory=whole.directory
    )
    assert result.loaded == 0
    assert result.output.refusal is not None and result.output.refusal.reason == (
        "entity_unresolved"
    )
    assert result.output.to_json() == compile_input(whole).to_json()


def test_only_the_fields_documented_as_differing_differ(sqlite_store):
    whole = load_input(corpus())
    sqlite_store.load(whole.candidates)
    result = pushdown.compile_pushed_down(
        whole.request, whole.contract, "sqlite", sqlite_store.execute, directory=whole.directory
    )
    full, pushed = compile_input(whole).to_json(), result.output.to_json()
    assert {k for k in full if full[k] != pushed[k]} == set(pushdown.DIFFERING_FIELDS)
    # Not loaded, so not listed: the rows admission would reject outright for this request.
    assert "elsewhere" not in {r["id"] for r in pushed["rejected"]}
    assert result.loaded < len(whole.candidates)


def test_an_unknown_dialect_or_table_name_is_a_clear_error():
    whole: CompileInput = load_input(corpus())
    with pytest.raises(ValueError, match="dialect must be one of postgresql, sqlite, not 'mysql'"):
        pushdown.admission_query(whole.request, whole.contract, "mysql")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="table name 'x; DROP' is not a plain SQL identifier"):
        pushdown.candidate_table_ddl("sqlite", table="x; DROP")
