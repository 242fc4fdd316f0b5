"""django-tasks-db's `db_worker`, which first requeues the suite runs a stopped worker left
running (a worker killed mid-run leaves its run "running" and its task claimed, so no worker
would pick it up again), and starts the worker's heartbeat (scenarios.heartbeat).

It shadows django_tasks_db's command because `scenarios` comes before `django_tasks_db` in
INSTALLED_APPS; every option is django-tasks-db's."""

from __future__ import annotations

from typing import Any

from django_tasks_db.management.commands import db_worker

from scenarios import heartbeat

from .requeue_stale_runs import report


class Command(db_worker.Command):
    help = db_worker.Command.help + " (after requeuing stale suite runs)"

    def handle(self, *args: Any, **options: Any) -> None:
        report(self.stdout)
        heartbeat.start()
        super().handle(*args, **options)
