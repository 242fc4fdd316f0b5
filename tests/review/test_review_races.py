"""Racing publishes on PostgreSQL: parallel threads, each with its own connection."""

from __future__ import annotations

import threading
from collections import Counter

import pytest
from django.db import connection, connections

from contracts import roles, services
from contracts.models import Bundle, ContractVersion
from publishing import review

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
    return Counter(outcome for _, outcome in race_mix([("work", work)] * THREADS))


def race_mix(works) -> list[tuple[str, str]]:
    """Run each `(label, work)` in its own thread, all released together; say what each
    one ended with (`ok:<result>` or the exception's class name)."""
    barrier = threading.Barrier(len(works))
    outcomes: list[tuple[str, str]] = []
    lock = threading.Lock()

    def run(label, work) -> None:
        try:
            barrier.wait()
            result = work()
            outcome = f"ok:{result}"
        except Exception as exc:  # the outcome is what the test counts
            outcome = type(exc).__name__
        finally:
            connections.close_all()
        with lock:
            outcomes.append((label, outcome))

    threads = [threading.Thread(target=run, args=work) for work in works]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


def approved_version(draft, owner, reviewer, devices):
    version = review.version_submit(
        actor=owner, version=draft, expected_lock_version=draft.lock_version
    )
    report = review.report_for(version)
    devices.approve(actor=reviewer, version=version, report_sha256=report.sha256)
    version.refresh_from_db()
    return version


def test_racing_publishes_of_one_version_publish_it_once(draft, owner, reviewer, keys, devices):
    version = approved_version(draft, owner, reviewer, devices)
    outcomes = race(lambda: devices.publish(actor=owner, version=version).sha256)
    assert sum(n for o, n in outcomes.items() if o.startswith("ok:")) == 1, outcomes
    assert outcomes["ValidationError"] == THREADS - 1, outcomes
    assert Bundle.objects.count() == 1
    version.refresh_from_db()
    assert version.status == "published"


def test_racing_drafts_and_publishes_keep_numbers_sequential_and_the_chain_linear(
    draft, owner, reviewer, keys, devices
):
    decision_type = draft.decision_type
    devices.publish(actor=owner, version=approved_version(draft, owner, reviewer, devices))
    for expected_number in (2, 3):
        outcomes = race(
            lambda: services.version_start_draft(actor=owner, decision_type=decision_type).number
        )
        assert outcomes[f"ok:{expected_number}"] == 1, outcomes
        assert outcomes["ValidationError"] == THREADS - 1, outcomes
        new = decision_type.versions.get(number=expected_number)
        version = approved_version(new, owner, reviewer, devices)
        outcomes = race(lambda v=version: devices.publish(actor=owner, version=v).sha256)
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


def test_publishing_starting_a_draft_and_approving_at_once_never_deadlocks(
    draft, owner, reviewer, make_user, keys, devices
):
    """Issue 8: with version N approved, three owners publishing, one starting a new draft
    and four reviewers approving at the same moment used to deadlock (`deadlock detected`,
    answered 500), sometimes with nothing published. Every outcome must now be a success or
    a refusal a person can act on."""
    decision_type = draft.decision_type
    owners = [owner]
    reviewers = [reviewer]
    for name, role, people in (
        ("oona", roles.Role.OWNER, owners),
        ("omar", roles.Role.OWNER, owners),
        ("ruth", roles.Role.REVIEWER, reviewers),
        ("remy", roles.Role.REVIEWER, reviewers),
        ("rosa", roles.Role.REVIEWER, reviewers),
    ):
        person = make_user(name)
        services.access_grant(actor=owner, decision_type=decision_type, user=person, role=role)
        devices.ensure(person)
        people.append(type(person).objects.get(pk=person.pk))
    refusals = {"ValidationError", "EditConflict"}
    for _round in range(3):
        open_version = decision_type.versions.filter(
            status__in=ContractVersion.OPEN_STATUSES
        ).first() or services.version_start_draft(actor=owner, decision_type=decision_type)
        version = approved_version(open_version, owner, reviewer, devices)
        sha256 = review.report_for(version).sha256
        works = [
            ("publish", lambda o=o, v=version: devices.publish(actor=o, version=v).sha256)
            for o in owners
        ]
        works.append(
            (
                "draft",
                lambda: (
                    services.version_start_draft(
                        actor=owners[1], decision_type=decision_type
                    ).number
                ),
            )
        )
        works += [
            (
                "approve",
                lambda r=r, v=version, h=sha256: (
                    devices.approve(actor=r, version=v, report_sha256=h).pk
                ),
            )
            for r in reviewers
        ]
        outcomes = race_mix(works)
        assert all(o.startswith("ok:") or o in refusals for _, o in outcomes), outcomes
        published = [o for label, o in outcomes if label == "publish" and o.startswith("ok:")]
        assert len(published) <= 1, outcomes
        version.refresh_from_db()
        if not published:
            # Each publisher signed the bundle as it stood before the race; an approval that
            # landed meanwhile changes the bundle, so those statements are refused ("sign
            # again"). Signing again publishes, exactly once.
            assert version.status == "approved", outcomes
            devices.publish(actor=owners[0], version=version)
            version.refresh_from_db()
        assert version.status == "published", outcomes
        assert Bundle.objects.filter(version=version).count() == 1
    assert decision_type.versions.filter(status="published").count() == 1
