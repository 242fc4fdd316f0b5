"""django-tasks-db's `db_worker`, which first recovers the work a stopped worker left (a
worker killed mid-task leaves its row "running" and its task claimed, so no worker would pick
it up again): every stale-work checker the apps registered (`workers.registry`) runs, and
what each recovered is written out. Then it starts the worker's heartbeat
(`workers.heartbeat`) and, unless it is a `--batch` worker, the registered housekeeping jobs
(old runs pruned, say), each on its own schedule.

While it lives it runs the checkers again every STALE_WORK_CHECK_SECONDS: a worker killed
after this one started leaves work whose heartbeat was still recent at the start, and that
work would otherwise stay "running" until a command found it. The check runs in a thread of
its own (waiting on an event between checks, never spinning), so a worker busy with a long
task still looks; two workers checking at once recover a row once, as each checker locks the
row and checks it is still stale first.

On SIGTERM django-tasks-db's worker lets the task in hand finish, then exits; a task that can
hand its work back does so sooner (`workers.stopping`).

It shadows django_tasks_db's command because `workers` comes before `django_tasks_db` in
INSTALLED_APPS; every option is django-tasks-db's."""

from __future__ import annotations

import logging
import threading
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError
from django.db import DatabaseError, connections
from django_tasks_db.management.commands import db_worker

from workers import heartbeat, registry

NO_STALE_CHECK = "STALE_WORK_CHECK_SECONDS must be more than 0 (it is {value!r})."
NO_STALE_WORK = "No stale work."

logger = logging.getLogger(__name__)


class Command(db_worker.Command):
    help = db_worker.Command.help + " (recovering stale work as it starts and while it lives)"

    def handle(self, *args: Any, **options: Any) -> None:
        check_every = float(getattr(settings, "STALE_WORK_CHECK_SECONDS", 15))
        if not check_every > 0:
            raise CommandError(NO_STALE_CHECK.format(value=check_every))
        recovered = registry.recover_stale_work()
        for line in recovered or [NO_STALE_WORK]:
            self.stdout.write(line)
        # The heartbeat, the stale-work check and the housekeeping live as long as the worker
        # does: a batch worker (or one called from a test) that returns stops them too, never
        # leaving a thread behind.
        threads = [
            heartbeat.start(),
            heartbeat.every(check_every, check_stale_work, name="stale-work-check"),
        ]
        if not options.get("batch"):  # a batch worker drains the queue and exits
            threads += [on_schedule(job) for job in registry.housekeeping_jobs()]
        try:
            super().handle(*args, **options)
        finally:
            for stop in threads:
                stop.set()


def check_stale_work() -> None:
    """The worker's periodic check for work a stopped worker left: every registered checker,
    each recovered row logged."""
    for line in registry.recover_stale_work():
        logger.warning("A worker stopped: %s", line)


def on_schedule(job: registry.HousekeepingJob) -> threading.Event:
    """Run the job now and then every `job.every_seconds()` seconds, in a daemon thread (a
    long task keeps the worker's loop busy); the returned event stops it."""
    stop = threading.Event()
    interval = job.every_seconds()

    def loop() -> None:
        while True:
            try:
                job.run()
            except DatabaseError:
                logger.exception("Housekeeping %r failed", job.name)
            finally:
                connections.close_all()
            if stop.wait(interval):
                return

    threading.Thread(target=loop, name=job.name, daemon=True).start()
    return stop
