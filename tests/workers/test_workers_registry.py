"""The apps tell every worker what to recover through `workers.registry`: the worker runs
each registered checker as it starts (saying what each recovered) and in its periodic check
(logging it), and the apps above register theirs as they load."""

from __future__ import annotations

import io
import logging

import pytest
from django.core.management import call_command

from workers import registry
from workers.management.commands.db_worker import NO_STALE_WORK, check_stale_work

DATABASE_TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}


def test_the_apps_register_their_checkers_and_housekeeping():
    checkers = {checker.name for checker in registry.stale_work_checkers()}
    assert {"suite runs", "suite strength runs", "impact reports"} <= checkers
    assert [job.name for job in registry.housekeeping_jobs()] == ["prune-runs"]


@pytest.fixture
def only_these_checkers(monkeypatch):
    monkeypatch.setattr(registry, "_checkers", {})

    def register(**found: list[str]):
        for name, lines in found.items():
            registry.register_stale_work_checker(name, lambda lines=lines: list(lines))

    return register


@pytest.mark.django_db(transaction=True)  # the worker closes its connections
def test_a_starting_worker_says_what_each_checker_recovered(only_these_checkers, settings):
    settings.TASKS = DATABASE_TASKS
    only_these_checkers(runs=["Run 7: requeued"], reports=[], strength=["Suite strength 3"])
    out = io.StringIO()
    call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[:2] == ["Run 7: requeued", "Suite strength 3"]
    assert NO_STALE_WORK not in lines

    only_these_checkers(runs=[], reports=[], strength=[])
    out = io.StringIO()
    call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload", stdout=out)
    assert out.getvalue().splitlines()[0] == NO_STALE_WORK


def test_the_periodic_check_logs_each_recovery(only_these_checkers, caplog):
    only_these_checkers(runs=["Run 7: requeued"], reports=["Impact report of version 2"])
    with caplog.at_level(logging.WARNING):
        check_stale_work()
    assert [record.getMessage() for record in caplog.records] == [
        "A worker stopped: Run 7: requeued",
        "A worker stopped: Impact report of version 2",
    ]
