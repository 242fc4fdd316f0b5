"""Racing edits of one scenario / one candidate on PostgreSQL: one wins, the others are told.

Every thread opened the same form (lock_version 0) and saves at once; the row lock makes them
take turns, so exactly one save lands and the rest raise `EditConflict` with nothing saved.
"""

from __future__ import annotations

import threading
from collections import Counter

import pytest
from django.db import connection, connections

from contracts.services import EditConflict
from scenarios import services

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="needs PostgreSQL (DATABASE_URL=postgres://…): SQLite has no row locks "
        "(select_for_update is a no-op) and lets one writer in at a time, so there is no race "
        "to observe",
    ),
]

THREADS = 6


def race(work) -> Counter:
    """Run `work(i)` in THREADS threads released together; count what each one ended with."""
    barrier = threading.Barrier(THREADS)
    outcomes: list[str] = []
    lock = threading.Lock()

    def run(i: int) -> None:
        try:
            barrier.wait()
            work(i)
            outcome = "ok"
        except Exception as exc:  # the outcome is what the test counts
            outcome = type(exc).__name__
        finally:
            connections.close_all()
        with lock:
            outcomes.append(outcome)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return Counter(outcomes)


def test_racing_scenario_edits_save_one(owner, corpus, scenario):
    outcomes = race(
        lambda i: services.scenario_update(
            actor=owner,
            scenario=scenario,
            corpus=corpus,
            expected_lock_version=0,
            description=f"edit {i}",
        )
    )
    assert outcomes == Counter({"ok": 1, EditConflict.__name__: THREADS - 1}), outcomes
    scenario.refresh_from_db()
    assert scenario.lock_version == 1 and scenario.description.startswith("edit ")


def test_racing_candidate_edits_save_one(owner, corpus):
    data = corpus.candidates.get(candidate_id="rm-note-N7").data
    outcomes = race(
        lambda i: services.candidate_save(
            actor=owner,
            corpus=corpus,
            data=data | {"content": f"edit {i}"},
            original_id="rm-note-N7",
            expected_lock_version=0,
        )
    )
    assert outcomes == Counter({"ok": 1, EditConflict.__name__: THREADS - 1}), outcomes
    row = corpus.candidates.get(candidate_id="rm-note-N7")
    assert row.lock_version == 1 and row.data["content"].startswith("edit ")
