"""The parts of the test world (the people, catalogue and types of tests/conftest.py, the
demo workspace, the review suite's scenarios and its versions in review, approved and
published), built once per test process and copied into each test that asks for them.

Building a part through the services (audit events, guardian grants, snapshots, scenario
runs, impact reports, signatures) costs far more than writing the rows it leaves behind. So
at the start of the session (`django_db_setup` in tests/conftest.py) each part the collected
tests ask for is built on a database holding only the parts it is built on, inside a
savepoint that is rolled back, and what it did to the tables is kept: the rows it added, the
rows it changed (as they were and as it left them) and the rows it deleted. A test's fixture
then writes that in the test's transaction, which the test's rollback removes. A test sees
what building its parts would have left, and nothing of the parts it did not ask for.

A part that changes or deletes rows is copied only while those rows are exactly as it found
them; a test whose earlier fixtures changed them gets the part built instead.

Each part is built with the tables' id counters moved to a range of its own, far above what
a test creates, so a test's own rows never take an id a part's rows need, whatever order the
fixtures insert them in. A flush (what a transactional test does at its end) recreates the
groups, content types and permissions under new ids, which the kept rows do not point at: it
discards them, and from then on (and in transactional tests, and whenever a part's `fits`
says the test's database is not one its rows fit) a fixture builds its part as it is built
here.
"""

from __future__ import annotations

import io
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from django.apps import apps
from django.core.management import call_command
from django.db import connection, models, transaction
from django.db.models.signals import post_migrate

from contracts import demo as contracts_demo
from contracts import roles
from contracts.models import DecisionType

# Part k's ids start at (k + 1) * ID_RANGE: well above any test's own rows, and within a
# 32-bit id column for a few hundred parts.
ID_RANGE = 1_000_000


Rows = dict[type[models.Model], list[dict[str, Any]]]


@dataclass(frozen=True)
class Part:
    """What building a part did to the tables, by model."""

    added: Rows
    # Each changed row as the part found it and as it left it.
    changed: dict[type[models.Model], list[tuple[dict[str, Any], dict[str, Any]]]]
    deleted: Rows


def _models() -> list[type[models.Model]]:
    return [
        model
        for model in apps.get_models(include_auto_created=True)
        if model._meta.managed and not model._meta.proxy
    ]


def _columns(model: type[models.Model]) -> list[str]:
    return [f.attname for f in model._meta.local_concrete_fields]


def _rows(model: type[models.Model]) -> dict[Any, dict[str, Any]]:
    columns = _columns(model)
    pk = model._meta.pk.attname
    return {
        row[pk]: row for row in model._base_manager.using("default").order_by().values(*columns)
    }


def _tables_state() -> dict[type[models.Model], dict[Any, dict[str, Any]]]:
    return {model: _rows(model) for model in _models()}


def _move_id_counters(start: int) -> None:
    """Make every table's next automatic id at least `start` (rolled back with the savepoint
    on SQLite; PostgreSQL's sequences never go back, which only skips ids)."""
    with connection.cursor() as cursor:
        for model in _models():
            pk = model._meta.pk
            if not isinstance(pk, models.AutoField | models.BigAutoField | models.SmallAutoField):
                continue
            table = model._meta.db_table
            if connection.vendor == "sqlite":
                cursor.execute("DELETE FROM sqlite_sequence WHERE name = %s", [table])
                cursor.execute(
                    "INSERT INTO sqlite_sequence (name, seq) VALUES (%s, %s)", [table, start]
                )
            elif connection.vendor == "postgresql":
                cursor.execute(
                    "SELECT setval(pg_get_serial_sequence(%s, %s), %s)",
                    [connection.ops.quote_name(table), pk.column, start],
                )
            else:  # pragma: no cover - the suite runs on SQLite and PostgreSQL
                raise NotImplementedError(connection.vendor)


def _record(index: int, build: Callable[[], None]) -> Part:
    before = _tables_state()
    _move_id_counters((index + 1) * ID_RANGE)
    build()
    part = Part(added={}, changed={}, deleted={})
    for model, rows in _tables_state().items():
        earlier = before[model]
        if added := [row for pk, row in rows.items() if pk not in earlier]:
            part.added[model] = added
        if changed := [(row, rows[pk]) for pk, row in earlier.items() if rows.get(pk, row) != row]:
            part.changed[model] = changed
        if deleted := [row for pk, row in earlier.items() if pk not in rows]:
            part.deleted[model] = deleted
    return part


def _found_as_recorded(part: Part) -> bool:
    """Whether the rows the part changes or deletes are as it found them when it was built."""
    found: dict[type[models.Model], list[dict[str, Any]]] = {
        model: [row for row, _ in pairs] for model, pairs in part.changed.items()
    }
    for model, rows in part.deleted.items():
        found.setdefault(model, []).extend(rows)
    for model, rows in found.items():
        pk = model._meta.pk.attname
        now = model._base_manager.using("default").filter(pk__in=[row[pk] for row in rows])
        current = {row[pk]: row for row in now.order_by().values(*_columns(model))}
        if any(current.get(row[pk]) != row for row in rows):
            return False
    return True


def _net(part: Part) -> Counter[type[models.Model]]:
    written: Counter[type[models.Model]] = Counter()
    for model, rows in part.added.items():
        written[model] += len(rows)
    for model, rows in part.deleted.items():
        written[model] -= len(rows)
    return written


def _make_person(username: str, groups: tuple[str, ...] = (), superuser: bool = False) -> None:
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    user = get_user_model().objects.create_user(
        username=username, password=f"{username}-password", is_superuser=superuser
    )
    for group in groups:
        user.groups.add(Group.objects.get(name=group))


def _person(username: str):
    from django.contrib.auth import get_user_model

    return get_user_model().objects.get(username=username)


def _catalogue() -> None:
    contracts_demo.create_source_classes(actor=_person("cleo"))


def _atlas() -> None:
    contracts_demo.create_contract(
        contracts_demo.ATLAS,
        owner=_person("olivia"),
        reviewers=[_person("rafael")],
        viewers=[_person("vera")],
    )


def _refund() -> None:
    contracts_demo.create_contract(contracts_demo.REFUND_DESK, owner=_person("otto"))


def _demo_scenarios() -> None:
    """The demo's corpora and scenarios, for Atlas and a refund desk owned by olivia."""
    from scenarios import demo as scenarios_demo

    if not DecisionType.objects.filter(key=contracts_demo.REFUND_DESK.key).exists():
        contracts_demo.create_contract(contracts_demo.REFUND_DESK, owner=_person("olivia"))
    scenarios_demo.load(io.StringIO(), queue_runs=False)


def _review_the_demo() -> None:
    from publishing import demo as publishing_demo
    from scenarios import demo as scenarios_demo

    scenarios_demo.load(io.StringIO(), queue_runs=False)
    publishing_demo.load_review(io.StringIO())


def _load_demo() -> None:
    call_command("load_demo", stdout=io.StringIO())


@dataclass(frozen=True)
class Recipe:
    build: Callable[[], None]
    # The parts its fixture asks for first: present when it is built, and when it is inserted.
    after: tuple[str, ...] = ()
    # Whether the test's database is one the recorded rows fit (else the part is built).
    fits: Callable[[], bool] = lambda: True


def _no_people() -> bool:
    from django.contrib.auth import get_user_model

    return not get_user_model().objects.exists()


def _no_refund_desk() -> bool:
    return not DecisionType.objects.filter(key=contracts_demo.REFUND_DESK.key).exists()


# By fixture name, each after the parts it is built on; a part's place gives its id range.
RECIPES: dict[str, Recipe] = {
    "owner": Recipe(partial(_make_person, "olivia", (roles.POLICY_OWNERS,))),
    "other_owner": Recipe(partial(_make_person, "otto", (roles.POLICY_OWNERS,))),
    "reviewer": Recipe(partial(_make_person, "rafael", (roles.RISK_REVIEWERS,))),
    "viewer": Recipe(partial(_make_person, "vera", (roles.VIEWERS,))),
    "catalogue_manager": Recipe(partial(_make_person, "cleo", (roles.CATALOGUE_MANAGERS,))),
    "stranger": Recipe(partial(_make_person, "sam")),
    "superuser": Recipe(partial(_make_person, "root", superuser=True)),
    "catalogue": Recipe(_catalogue, after=("owner", "catalogue_manager")),
    "atlas": Recipe(_atlas, after=("catalogue", "owner", "reviewer", "viewer")),
    "refund": Recipe(_refund, after=("catalogue", "other_owner")),
    "suite": Recipe(_demo_scenarios, after=("atlas", "owner"), fits=_no_refund_desk),
    "demo_workspace": Recipe(lambda: contracts_demo.load(io.StringIO()), fits=_no_people),
    "demo_versions": Recipe(_review_the_demo, after=("demo_workspace",)),
    "demo": Recipe(_load_demo, fits=_no_people),
}


def add_part(name: str, build: Callable[[], None], *, after: tuple[str, ...] = ()) -> None:
    """Make `build` the part of fixture `name` (a conftest's, at import): recorded when a
    collected test asks for that fixture, after the parts in `after`."""
    if name in RECIPES:
        raise ValueError(f"the shared world already has a part named {name!r}")
    unknown = [part for part in after if part not in RECIPES]
    if unknown:
        raise ValueError(f"part {name!r} is built on parts the world does not have: {unknown}")
    RECIPES[name] = Recipe(build, after=after)


USERNAMES = {
    name: recipe.build.args[0]
    for name, recipe in RECIPES.items()
    if isinstance(recipe.build, partial)
}


def _with_prerequisites(names: Iterable[str]) -> list[str]:
    """`names` and every part they are built on, in RECIPES order."""
    wanted: set[str] = set()
    pending = [name for name in names if name in RECIPES]
    while pending:
        name = pending.pop()
        if name not in wanted:
            wanted.add(name)
            pending.extend(RECIPES[name].after)
    return [name for name in RECIPES if name in wanted]


class World:
    def __init__(self) -> None:
        self._parts: dict[str, Part] = {}
        # Each table's rows on the migrated database, and those the world wrote in this test.
        self._empty: dict[type[models.Model], int] = {}
        self._written: Counter[type[models.Model]] = Counter()
        # Files a part writes outside the database (people's key files): the session's.
        self.folder = Path(tempfile.gettempdir())
        post_migrate.connect(self._forget)

    def _forget(self, **kwargs: object) -> None:
        # A flush or a migration: the recorded rows may point at rows that are gone.
        self._parts = {}

    def record(self, names: Iterable[str]) -> None:
        """Build the parts `names` ask for (and those they are built on), each on an
        otherwise empty database, and keep their rows; the database is left as it was."""
        parts: dict[str, Part] = {}
        # A signed-in client's session row is no row a part builds on, and tests sign in
        # before they ask for the world's parts.
        self._empty = _row_counts(m for m in _models() if m._meta.app_label != "sessions")
        with transaction.atomic():
            for name in _with_prerequisites(names):
                savepoint = transaction.savepoint_create()
                for prerequisite in _with_prerequisites(RECIPES[name].after):
                    _replay(parts[prerequisite])
                parts[name] = _record(list(RECIPES).index(name), RECIPES[name].build)
                transaction.savepoint_rollback(savepoint)
        self._parts = parts

    def begin_test(self) -> None:
        self._written = Counter()

    def insert(self, name: str) -> None:
        """Give the test the rows of part `name` (its fixtures have already given it the
        parts it is built on). A transactional test, a test after a flush, a test that wrote
        rows of its own first, or one that already has people where the part expects none,
        gets the part built instead."""
        part = self._parts.get(name)
        if (
            part is None
            or not connection.in_atomic_block
            or not RECIPES[name].fits()
            or not self._only_the_worlds_rows()
            or not _found_as_recorded(part)
        ):
            before = _row_counts(_models()) if connection.in_atomic_block else None
            RECIPES[name].build()
            if before is not None:
                after = _row_counts(_models())
                self._written.update({model: after[model] - before[model] for model in after})
        else:
            _replay(part)
            self._written.update(_net(part))

    def _only_the_worlds_rows(self) -> bool:
        """Whether the test's database holds only the migrated rows and the parts the world
        wrote in this test. What a part builds may depend on any row (a scenario the test
        added first changes what publishing its suite writes), and nearly every change a
        test makes through the services adds a row, an audit event at least."""
        counts = _row_counts(self._empty)
        return all(counts[model] == self._empty[model] + self._written[model] for model in counts)

    def person(self, name: str):
        """The part's person as a fresh instance (no permission cache from another test)."""
        self.insert(name)
        return _person(USERNAMES[name])


def _row_counts(tables: Iterable[type[models.Model]]) -> dict[type[models.Model], int]:
    """Each table's number of rows, in one query."""
    tables = list(tables)
    counts = ", ".join(
        f"(SELECT COUNT(*) FROM {connection.ops.quote_name(model._meta.db_table)})"
        for model in tables
    )
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {counts}")
        return dict(zip(tables, cursor.fetchone(), strict=True))


def _replay(part: Part) -> None:
    # One transaction, so the foreign keys (deferred) are checked once every row is written;
    # the rows it found changed before the new ones come (a version published, then the
    # next draft: one open version a type).
    with transaction.atomic():
        for model, rows in part.deleted.items():
            pk = model._meta.pk.attname
            model._base_manager.using("default").filter(
                pk__in=[row[pk] for row in rows]
            )._raw_delete("default")
        for model, pairs in part.changed.items():
            pk = model._meta.pk.attname
            for found, left in pairs:
                values = {column: value for column, value in left.items() if found[column] != value}
                model._base_manager.using("default").filter(pk=left[pk]).update(**values)
        for model, rows in part.added.items():
            # Raw: the values as kept, without auto_now or defaults computed again.
            model._base_manager.using("default")._insert(
                [SimpleNamespace(**row) for row in rows],
                fields=model._meta.local_concrete_fields,
                raw=True,
            )


WORLD = World()
