"""A run's result rows keep their JSON columns without SQLite's `JSON_VALID` check (which
re-parsed every value a run inserts), and the migration that drops it rebuilds the table
once, keeping every stored result; migrated backwards, the checks come back, rows intact."""

from __future__ import annotations

import pytest
from django.db import connection
from migrating import migrate_to

from scenarios.models import ScenarioResult

BEFORE = ("scenarios", "0012_chunk_tallies_and_report_pieces")
AFTER = ("scenarios", "0013_result_json_unchecked")
JSON_COLUMNS = (
    "perturbation_args",
    "slot_states",
    "flips",
    "verdict_counts",
    "expectation_failures",
    "verdicts",
)


def stored(run):
    """Every row of the run as the ORM reads it back, JSON columns parsed."""
    return list(
        ScenarioResult.objects.filter(run=run)
        .order_by("position")
        .values("position", "perturbation", "input_json", "output_json", *JSON_COLUMNS)
    )


def table_sql() -> str:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = %s",
            [ScenarioResult._meta.db_table],
        )
        return cursor.fetchone()[0]


def test_result_columns_are_json_without_a_check(finished_run):
    """What the run wrote reads back as JSON, and SQLite's table checks none of it."""
    rows = stored(finished_run)
    assert len(rows) == finished_run.summary["compiles"] > 1
    variant = next(r for r in rows if r["perturbation"])
    assert isinstance(variant["slot_states"], dict) and isinstance(variant["verdicts"], list)
    assert variant["perturbation_args"]["name"] == variant["perturbation"]
    if connection.vendor == "sqlite":
        assert "JSON_VALID" not in table_sql()


@pytest.mark.django_db(transaction=True)
def test_the_migration_keeps_every_row_both_ways(owner, draft, scenario):
    from scenarios import services

    run = services.run_start(actor=owner, version=draft)
    before = stored(run)
    try:
        migrate_to(BEFORE)
        if connection.vendor == "sqlite":
            sql = table_sql()
            assert all(f'JSON_VALID("{column}")' in sql for column in JSON_COLUMNS)
        migrate_to(AFTER)
    finally:
        migrate_to()  # whatever failed, the next test gets the schema it expects
    assert stored(run) == before
    if connection.vendor == "sqlite":
        assert "JSON_VALID" not in table_sql()
