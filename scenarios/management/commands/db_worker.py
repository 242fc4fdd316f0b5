"""django-tasks-db's `db_worker`, which first requeues the suite runs a stopped worker left
running (a worker killed mid-run leaves its run "running" and its task claimed, so no worker
would pick it up again), starts the worker's heartbeat (scenarios.heartbeat) and prunes old
runs (`prune_runs`) as it starts and then every RUN_PRUNE_EVERY_SECONDS (a day), unless it
is a `--batch` worker.

While it lives it looks again every STALE_WORK_CHECK_SECONDS (`check_stale_work`): a worker
killed after this one started leaves a run whose heartbeat was still recent at the start, and
that run would otherwise stay "running" until a page or `requeue_stale_runs` found it. The
check runs in a thread of its own (waiting on an event between checks, never spinning), so
a worker busy with a long chunk still looks; two workers checking at once requeue a run
once, as each requeue locks the run and checks it is still stale first.

On SIGTERM django-tasks-db's worker lets the task in hand finish, then exits: a run's tasks
are chunks of SUITE_RUN_CHUNK_SCENARIOS scenarios, about a second of compiles, so a stopped
worker is gone within seconds and the other chunks stay queued for the other workers.

It shadows django_tasks_db's command because `scenarios` comes before `django_tasks_db` in
INSTALLED_APPS; every option is django-tasks-db's."""

from __future__ import annotations

import logging
import threading
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError
from django.db import DatabaseError, connections
from django_tasks_db.management.commands import db_worker

from scenarios import heartbeat, services

from .requeue_stale_runs import recovered, report

NO_STALE_CHECK = "STALE_WORK_CHECK_SECONDS must be more than 0 (it is {value!r})."


class Command(db_worker.Command):
    help = db_worker.Command.help + " (requeuing stale runs as it starts and while it lives)"

    def handle(self, *args: Any, **options: Any) -> None:
        check_every = float(getattr(settings, "STALE_WORK_CHECK_SECONDS", 15))
        if not check_every > 0:
            raise CommandError(NO_STALE_CHECK.format(value=check_every))
        report(self.stdout)
        heartbeat.worker_starting.send(sender=self.__class__, stdout=self.stdout)
        # The heartbeat, the stale-work check and the pruning live as long as the worker
        # does: a batch worker (or one called from a test) that returns stops them too, never
        # leaving a thread behind.
        threads = [
            heartbeat.start(),
            heartbeat.every(check_every, check_stale_work, name="stale-work-check"),
        ]
        if not options.get("batch"):  # a batch worker drains the queue and exits
            every = float(getattr(settings, "RUN_PRUNE_EVERY_SECONDS", 86400))
            threads.append(prune_on_schedule(every))
        try:
            super().handle(*args, **options)
        finally:
            for stop in threads:
                stop.set()


logger = logging.getLogger(__name__)


def check_stale_work() -> None:
    """The worker's periodic check for work a stopped worker left: suite runs requeued (or
    failed after their last requeue), suite-strength runs failed, and the receivers of
    `heartbeat.stale_work_check` (impact reports, queued again or failed). Each recovery
    locks its row and checks it is still stale, so concurrent checks recover it once."""
    for run in services.runs_requeue_stale():
        logger.warning("A worker stopped: %s", recovered(run))
    for strength in services.mutation_runs_fail_stale():
        logger.warning("A worker stopped: suite strength %s: %s", strength.pk, strength.error)
    heartbeat.stale_work_check.send(sender=Command)


def prune_on_schedule(interval: float) -> threading.Event:
    """Prune old runs now and then every `interval` seconds, in a daemon thread (a long
    chunk keeps the worker's loop busy); the returned event stops it."""
    stop = threading.Event()

    def loop() -> None:
        while True:
            try:
                pruned = services.runs_prune()
                if pruned.deleted:
                    logger.info("Pruned %s run(s) under the retention policy", len(pruned.deleted))
            except DatabaseError:
                logger.exception("Old runs could not be pruned")
            finally:
                connections.close_all()
            if stop.wait(interval):
                return

    threading.Thread(target=loop, name="prune-runs", daemon=True).start()
    return stop
