"""Racing publishes on PostgreSQL: parallel threads, each with its own connection."""

from __future__ import annotations

import threading
from collections import Counter

import pytest
from django.db import connection, connections

from contracts import review, services
from contracts.models import Bundle, ContractVersion

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
    """Run `work()` in THREADS threads released together; count what each one ended with."""
    barrier = threading.Barrier(THREADS)
    outcomes: list[str] = []
    lock = threading.Lock()

    def run() -> None:
        try:
            barrier.wait()
            result = work()
            outcome = f"ok:{result}"
        except Exception as exc:  # the outcome is what the test counts
            outcome = type(exc).__name__
        finally:
            connections.close_all()
        with lock:
            outcomes.append(outcome)

    threads = [threading.Thread(target=run) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return Counter(outcomes)


def approved_version(draft, owner, reviewer):
    version = review.version_submit(
        actor=owner, version=draft, expected_lock_version=draft.lock_version
    )
    report = review.report_for(version)
    review.version_approve(actor=reviewer, version=version, report_sha256=report.sha256)
    version.refresh_from_db()
    return version


def test_racing_publishes_of_one_version_publish_it_once(draft, owner, reviewer, keys):
    version = approved_version(draft, owner, reviewer)
    outcomes = race(lambda: review.version_publish(actor=owner, version=version).sha256)
    assert sum(n for o, n in outcomes.items() if o.startswith("ok:")) == 1, outcomes
    assert outcomes["ValidationError"] == THREADS - 1, outcomes
    assert Bundle.objects.count() == 1
    version.refresh_from_db()
    assert version.status == "published"


def test_racing_drafts_and_publishes_keep_numbers_sequential_and_the_chain_linear(
    draft, owner, reviewer, keys
):
    decision_type = draft.decision_type
    review.version_publish(actor=owner, version=approved_version(draft, owner, reviewer))
    for expected_number in (2, 3):
        outcomes = race(
            lambda: services.version_start_draft(actor=owner, decision_type=decision_type).number
        )
        assert outcomes[f"ok:{expected_number}"] == 1, outcomes
        assert outcomes["ValidationError"] == THREADS - 1, outcomes
        new = decision_type.versions.get(number=expected_number)
        version = approved_version(new, owner, reviewer)
        outcomes = race(lambda v=version: review.version_publish(actor=owner, version=v).sha256)
        assert sum(n for o, n in outcomes.items() if o.startswith("ok:")) == 1, outcomes
    numbers = list(decision_type.versions.order_by("number").values_list("number", "status"))
    assert numbers == [(1, "superseded"), (2, "superseded"), (3, "published")]
    chain = []
    bundle = Bundle.objects.get(decision_type=decision_type, parent__isnull=True)
    while bundle is not None:
        chain.append(bundle.version.number)
        bundle = Bundle.objects.filter(parent=bundle).first()
    assert chain == [1, 2, 3]
    assert ContractVersion.objects.filter(decision_type=decision_type).count() == 3
