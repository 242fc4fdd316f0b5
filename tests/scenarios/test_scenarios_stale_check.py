"""A worker looks for work a stopped worker left while it lives, not only as it starts: a run
killed within the staleness window of another worker's start is not stale when that worker
starts, and used to stay "running" until someone viewed it. The check (`check_stale_work`,
which `db_worker` calls every STALE_WORK_CHECK_SECONDS from a thread) is called directly
here, with the heartbeats moved back instead of waiting.

The decision type is the building-control one of `strength_domain` (neither demo domain)."""

from __future__ import annotations

import datetime as dt
import io

import pytest
from django.core.management import CommandError, call_command
from django.test.utils import override_settings
from django.utils import timezone

from contracts import selectors as contract_selectors
from contracts.models import AuditEvent
from scenarios import runner, services
from scenarios.audit import Action
from scenarios.models import MutationRun, SuiteRun
from tests.scenarios import strength_domain as domain
from workers.management.commands.db_worker import check_stale_work

pytestmark = pytest.mark.django_db

DATABASE_TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}


class WorkerKilled(BaseException):
    """Stands for SIGKILL: nothing in the run catches it."""


@pytest.fixture
def occupancy(owner, catalogue_manager, settings):
    settings.SUITE_RUN_HEARTBEAT_SECONDS = 0
    settings.SUITE_RUN_STALE_SECONDS = 60
    decision_type, _scenario = domain.create(owner=owner, catalogue_manager=catalogue_manager)
    return contract_selectors.current_version(decision_type=decision_type)


def killed_run(owner, version, monkeypatch) -> SuiteRun:
    """A run whose worker died as it began its chunk: running, its chunk claimed."""

    def die(*args):
        raise WorkerKilled

    with monkeypatch.context() as patched:
        patched.setattr(runner, "_scenario_rows", die)
        run = services.run_start(actor=owner, version=version)
    run.refresh_from_db()
    assert run.status == SuiteRun.Status.RUNNING
    return run


def age(model, pk, seconds=61):
    """Time passes: the row's last heartbeat is `seconds` old."""
    model.objects.filter(pk=pk).update(heartbeat_at=timezone.now() - dt.timedelta(seconds=seconds))


@pytest.mark.django_db(transaction=True)  # the worker at the end closes its connections
def test_a_run_killed_after_a_worker_started_is_requeued_by_its_check_once(
    owner, occupancy, monkeypatch
):
    run = killed_run(owner, occupancy, monkeypatch)
    with override_settings(TASKS=DATABASE_TASKS):  # requeued tasks wait for a worker
        # Within the window (a worker starting now would leave it too): alive, left alone.
        age(SuiteRun, run.pk, seconds=30)
        check_stale_work()
        run.refresh_from_db()
        assert (run.status, run.requeues) == (SuiteRun.Status.RUNNING, 0)

        age(SuiteRun, run.pk)
        check_stale_work()
        run.refresh_from_db()
        assert (run.status, run.requeues) == (SuiteRun.Status.QUEUED, 1)
        [chunk] = run.chunks.all()
        assert (chunk.status, chunk.attempt) == ("queued", 1)

        # A second check (another worker's, say) finds nothing left to requeue.
        check_stale_work()
        run.refresh_from_db()
        assert run.requeues == 1
        requeued = AuditEvent.objects.filter(action=Action.RUN_REQUEUED, version=occupancy)
        assert requeued.count() == 1

        # The requeued chunk is a task a worker takes and finishes.
        call_command(
            "db_worker", "--batch", "--no-startup-delay", "--no-reload", stdout=io.StringIO()
        )
    run.refresh_from_db()
    assert (run.status, run.done, run.total) == (SuiteRun.Status.FINISHED, 1, 1)


def test_a_run_requeued_for_the_last_time_is_failed_by_the_check(owner, occupancy, monkeypatch):
    run = killed_run(owner, occupancy, monkeypatch)
    SuiteRun.objects.filter(pk=run.pk).update(requeues=services.MAX_REQUEUES)
    age(SuiteRun, run.pk)
    check_stale_work()
    run.refresh_from_db()
    assert run.status == SuiteRun.Status.FAILED and "requeued" in run.error


def test_a_suite_strength_run_whose_worker_stopped_is_failed_by_the_check(owner, occupancy):
    strength = MutationRun.objects.create(
        decision_type=occupancy.decision_type,
        version=occupancy,
        status=MutationRun.Status.RUNNING,
        started_by=owner,
        started_at=timezone.now(),
        heartbeat_at=timezone.now(),
    )
    check_stale_work()
    strength.refresh_from_db()
    assert strength.status == MutationRun.Status.RUNNING

    age(MutationRun, strength.pk)
    check_stale_work()
    strength.refresh_from_db()
    assert strength.status == MutationRun.Status.FAILED and strength.error


@pytest.mark.parametrize("seconds", [0, -5, float("nan")])
def test_a_worker_refuses_a_check_interval_that_would_spin(settings, seconds):
    settings.STALE_WORK_CHECK_SECONDS = seconds
    settings.TASKS = DATABASE_TASKS
    with pytest.raises(CommandError, match="STALE_WORK_CHECK_SECONDS must be more than 0"):
        call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload")
