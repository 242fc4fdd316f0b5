"""A stored impact report whose worker stops is recovered as a suite run is: while the worker
beats it reads "being computed"; once its heartbeat is stale it is queued again (by the next
look at the review pages, or by a worker as it starts), and after MAX_ATTEMPTS starts it is
failed with the reason, shown as failed, and approve says so. A failed attempt is tried again
on the next request, up to the same bound. The worker is "killed" by a BaseException, which
the report's own error handling does not catch: the row is left as a SIGKILL leaves it."""

from __future__ import annotations

import datetime as dt
import time

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.test.utils import override_settings
from django.urls import reverse
from django.utils import timezone

from contracts.models import StoredImpactReport
from publishing import impact, review
from publishing.impact import chunks

pytestmark = pytest.mark.django_db

DATABASE_TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
HTMX = {"HX-Request": "true"}
Status = StoredImpactReport.Status


class WorkerKilled(BaseException):
    """Stands for SIGKILL: nothing in the report's computation catches it."""


@pytest.fixture
def computations(monkeypatch):
    """set(outcomes): each computation of a report in turn is killed ("kill"), raises
    ("fail") or computes the real report ("compute", and every one after the list)."""
    calls: list[str] = []
    real = chunks.scenario_entries

    def set_outcomes(*outcomes: str) -> list[str]:
        def compute(inputs, scenarios):
            outcome = outcomes[len(calls)] if len(calls) < len(outcomes) else "compute"
            calls.append(outcome)
            if outcome == "kill":
                raise WorkerKilled
            if outcome == "fail":
                raise RuntimeError("the corpus store is unreachable")
            return real(inputs, scenarios)

        monkeypatch.setattr("publishing.impact.chunks.scenario_entries", compute)
        return calls

    return set_outcomes


def drain_queue():
    call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload", verbosity=0)


def submit(draft, owner):
    draft.refresh_from_db()
    return review.version_submit(
        actor=owner, version=draft, expected_lock_version=draft.lock_version
    )


def stored_row(version) -> StoredImpactReport:
    return StoredImpactReport.objects.get(version=version)


def stale(version):
    """Time passes: the computing worker's last heartbeat is older than the threshold."""
    StoredImpactReport.objects.filter(version=version).update(
        heartbeat_at=timezone.now() - dt.timedelta(seconds=61)
    )


def impact_url(version):
    kwargs = {"key": version.decision_type.key, "number": version.number}
    return reverse("version_impact", kwargs=kwargs)


def review_url(version):
    kwargs = {"key": version.decision_type.key, "number": version.number}
    return reverse("version_review", kwargs=kwargs)


def test_a_report_whose_worker_stopped_is_queued_again_and_computed(
    client, suite, draft, owner, reviewer, keys, computations
):
    calls = computations("kill")
    version = submit(draft, owner)
    lost = stored_row(version)
    assert (lost.status, lost.attempts) == (Status.COMPUTING, 1)

    # Its heartbeat is recent: a worker may still be on it, so the page waits and says so.
    client.force_login(reviewer)
    page = client.get(impact_url(version)).content.decode()
    assert stored_row(version).status == Status.COMPUTING and calls == ["kill"]
    assert "A worker has been computing it since" in page and "attempt 1 of 3" in page
    assert 'hx-trigger="every 2s"' in page

    stale(version)
    # The next look finds it stale and queues it again (the immediate backend computes it).
    poll = client.get(impact_url(version) + "?poll=1", headers=HTMX)
    recovered = stored_row(version)
    assert (recovered.status, recovered.attempts) == (Status.READY, 2)
    assert recovered.requeued_at is not None and calls == ["kill", "compute"]
    assert recovered.report_sha256 == impact.impact_report(version).sha256
    assert poll.status_code == 286 and recovered.report_sha256 in poll.content.decode()


def test_a_report_lost_on_every_attempt_fails_with_the_reason_and_is_shown_failed(
    client, suite, draft, owner, reviewer, keys, computations
):
    calls = computations("kill", "kill", "kill")
    version = submit(draft, owner)
    client.force_login(reviewer)
    for attempt in (2, 3):
        stale(version)
        page = client.get(review_url(version)).content.decode()
        row = stored_row(version)
        assert (row.status, row.attempts) == (Status.COMPUTING, attempt)
        assert 'id="report-pending"' in page and f"attempt {attempt} of 3" in page

    stale(version)
    poll = client.get(impact_url(version) + "?poll=1", headers=HTMX)
    failed = stored_row(version)
    assert (failed.status, failed.attempts) == (Status.FAILED, 3)
    assert failed.error.startswith("The worker computing it stopped (no heartbeat since")
    assert "on attempt 3 of 3; it was not queued again" in failed.error
    assert calls == ["kill", "kill", "kill"]  # never a fourth
    text = poll.content.decode()
    assert poll.status_code == 286 and "every 2s" not in text  # polling stops
    assert 'id="report-failed"' in text and failed.error in text
    review_page = client.get(review_url(version)).content.decode()
    assert 'id="report-failed"' in review_page and 'id="report-pending"' not in review_page
    assert 'id="approve"' not in review_page
    with pytest.raises(ValidationError) as refused:
        review.version_approve(
            actor=reviewer, version=version, report_sha256="0" * 64, signed_statement=None
        )
    assert refused.value.messages == [
        review.REPORT_FAILED.format(number=version.number, error=failed.error)
    ]
    # Looking again changes nothing: it stays failed, and nothing is computed.
    client.get(impact_url(version))
    assert stored_row(version).status == Status.FAILED and len(calls) == 3


def test_a_failed_attempt_is_tried_again_when_next_asked_for_up_to_the_bound(
    suite, draft, owner, keys, computations
):
    calls = computations("fail", "fail", "fail")
    version = submit(draft, owner)  # computes, and asks again as it answers: two attempts
    row = stored_row(version)
    assert row.status == Status.FAILED and row.attempts == len(calls) >= 1
    assert row.error == "RuntimeError: the corpus store is unreachable"
    for _ in range(3):
        row = impact.stored_report(version)
        assert row.attempts == len(calls)
    assert (row.status, row.attempts) == (Status.FAILED, 3)
    assert calls == ["fail", "fail", "fail"]  # further looks do not compute again

    # The same inputs keep that verdict; different inputs are a different report.
    from scenarios.models import Scenario

    scenario = Scenario.objects.filter(decision_type=version.decision_type).first()
    scenario.expected_slots = {**scenario.expected_slots, "facility_active": "unknown"}
    scenario.save()
    report = impact.ready_report(version)
    assert report is not None and calls[-1] == "compute"


def test_a_report_another_worker_is_computing_is_not_computed_twice(
    suite, draft, owner, keys, computations
):
    calls = computations("kill")
    version = submit(draft, owner)
    assert impact.computing.report_compute(version_id=version.pk).status == Status.COMPUTING
    assert calls == ["kill"]  # the live worker's: its heartbeat is recent


@pytest.mark.django_db(transaction=True)  # the heartbeat thread writes on its own connection
def test_the_computing_worker_beats_on_the_report(suite, draft, owner, keys, settings, monkeypatch):
    """While the report is computed its heartbeat moves on, so a long report is not taken
    for a lost one."""
    settings.IMPACT_REPORT_HEARTBEAT_SECONDS = 0.05
    beats = []
    real = chunks.scenario_entries

    def slow(inputs, scenarios):
        row = stored_row(inputs.version)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            time.sleep(0.05)
            beat = StoredImpactReport.objects.get(pk=row.pk).heartbeat_at
            if beat > row.started_at:
                beats.append(beat)
                break
        return real(inputs, scenarios)

    monkeypatch.setattr("publishing.impact.chunks.scenario_entries", slow)
    with override_settings(TASKS=DATABASE_TASKS):  # computed by a worker, as deployed
        version = submit(draft, owner)
        drain_queue()
    assert stored_row(version).status == Status.READY
    assert len(beats) == 1, "the heartbeat never moved while the report was computed"


def lost_report(draft, owner, computations):
    """Submitted with the database queue: a worker claims the report's task and dies
    computing it, so the task stays claimed and the report computing. The version."""
    from django_tasks_db.models import DBTaskResult

    version = submit(draft, owner)
    computations("kill")
    [task] = DBTaskResult.objects.all()
    task.claim("the-first-worker")
    with pytest.raises(WorkerKilled):
        impact.computing.report_compute(version_id=version.pk)
    return version


@pytest.mark.django_db(transaction=True)
def test_a_worker_starting_queues_a_lost_report_again_and_computes_it(
    suite, draft, owner, keys, computations
):
    from django_tasks_db.models import DBTaskResult

    with override_settings(TASKS=DATABASE_TASKS):
        version = lost_report(draft, owner, computations)
        assert stored_row(version).status == Status.COMPUTING
        stale(version)
        # The next worker requeues the report as it starts, then computes it.
        drain_queue()
        # The report's task again, and the task of its one slice (the suite is small).
        assert DBTaskResult.objects.filter(status="SUCCESSFUL").count() == 2
    row = stored_row(version)
    assert (row.status, row.attempts) == (Status.READY, 2)
    assert row.report_sha256 == impact.impact_report(version).sha256


def test_a_running_workers_check_queues_a_report_lost_after_it_started(
    suite, draft, owner, keys, computations
):
    """A report whose worker died after this worker started is not stale at that start; the
    worker's periodic check (`check_stale_work`) queues it again once it is."""
    from django_tasks_db.models import DBTaskResult

    from workers.management.commands.db_worker import check_stale_work

    with override_settings(TASKS=DATABASE_TASKS):
        version = lost_report(draft, owner, computations)
        check_stale_work()  # its heartbeat is recent: left to its worker
        assert stored_row(version).status == Status.COMPUTING
        stale(version)
        check_stale_work()
        assert stored_row(version).status == Status.PENDING
        check_stale_work()  # a second check queues nothing more
        assert DBTaskResult.objects.filter(status="READY").count() == 1


def retry_url(version):
    kwargs = {"key": version.decision_type.key, "number": version.number}
    return reverse("version_impact_retry", kwargs=kwargs)


def test_a_report_failed_for_good_is_computed_again_when_asked(
    client, suite, draft, owner, reviewer, viewer, keys, computations
):
    from contracts.models import AuditAction, AuditEvent

    calls = computations("fail", "fail", "fail")
    version = submit(draft, owner)
    for _ in range(3):
        impact.stored_report(version)
    failed = stored_row(version)
    assert (failed.status, failed.attempts) == (Status.FAILED, 3)

    # A viewer reads the failure but gets no button, and may not ask.
    client.force_login(viewer)
    page = client.get(impact_url(version)).content.decode()
    assert 'id="report-failed"' in page and "Compute the report again" not in page
    assert client.post(retry_url(version)).status_code == 403
    assert stored_row(version).status == Status.FAILED and len(calls) == 3

    client.force_login(reviewer)
    page = client.get(impact_url(version)).content.decode()
    assert f'action="{retry_url(version)}"' in page and "Compute the report again" in page
    response = client.post(retry_url(version))
    assert response.status_code == 302 and response["Location"] == impact_url(version)
    ready = stored_row(version)  # the immediate backend computes it at once
    assert (ready.status, ready.attempts, ready.error) == (Status.READY, 1, "")
    assert calls == ["fail", "fail", "fail", "compute"]
    event = AuditEvent.objects.get(action=AuditAction.IMPACT_REPORT_RETRIED)
    assert event.actor == reviewer and event.version == version
    assert event.changes == {"error": failed.error} and failed.error in event.summary
    assert "being computed again" in client.get(impact_url(version)).content.decode()


def test_a_report_that_has_not_failed_is_not_asked_for_again(
    client, suite, draft, owner, reviewer, keys
):
    version = submit(draft, owner)
    assert stored_row(version).status == Status.READY
    client.force_login(reviewer)
    refused = client.post(retry_url(version))
    assert refused.status_code == 422
    assert "has not failed, so there is nothing to compute again: it is ready." in (
        refused.content.decode()
    )
    assert client.get(retry_url(version)).status_code == 405
    from contracts.models import AuditAction, AuditEvent

    assert not AuditEvent.objects.filter(action=AuditAction.IMPACT_REPORT_RETRIED).exists()
