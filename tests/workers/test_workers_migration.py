"""`WorkerHeartbeat` moved from `scenarios` to `workers` (scenarios 0018, workers 0001-0002):
the heartbeats a running deployment wrote survive the move, in the table that now carries the
`workers` name, and migrating back puts them where they were."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from migrating import migrate_to

BEFORE = [("scenarios", "0017_archived_scenarios_corpora_candidates"), ("workers", None)]


def tables() -> set[str]:
    return set(connection.introspection.table_names())


@pytest.mark.django_db(transaction=True)
def test_the_heartbeats_move_to_the_workers_app_with_their_rows_and_back():
    seen = dt.datetime(2026, 12, 1, 9, 30, tzinfo=dt.UTC)
    try:
        apps = migrate_to(*BEFORE)
        assert "scenarios_workerheartbeat" in tables()
        Old = apps.get_model("scenarios", "WorkerHeartbeat")
        Old.objects.create(worker="host-a:101", seen_at=seen)
        Old.objects.create(worker="host-b:202", seen_at=seen + dt.timedelta(seconds=10))

        apps = migrate_to()
        New = apps.get_model("workers", "WorkerHeartbeat")
        assert New._meta.db_table == "workers_workerheartbeat"
        assert "workers_workerheartbeat" in tables()
        assert "scenarios_workerheartbeat" not in tables()
        moved = dict(New.objects.values_list("worker", "seen_at"))
        assert moved == {"host-a:101": seen, "host-b:202": seen + dt.timedelta(seconds=10)}
        # The unique worker name came along with the table.
        New.objects.update_or_create(worker="host-a:101", defaults={"seen_at": seen})
        assert New.objects.count() == 2

        apps = migrate_to(*BEFORE)
        Back = apps.get_model("scenarios", "WorkerHeartbeat")
        assert set(Back.objects.values_list("worker", flat=True)) == {"host-a:101", "host-b:202"}
    finally:
        migrate_to()  # whatever failed, the next test gets the schema it expects
