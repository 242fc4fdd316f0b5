"""Requeue suite runs whose worker stopped (killed, say); fail those requeued twice already.

`manage.py db_worker` does this as it starts and every STALE_WORK_CHECK_SECONDS after; this
command does it on demand."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from scenarios import services
from scenarios.recovery import recover_runs


class Command(BaseCommand):
    help = (
        "Requeue running suite runs whose heartbeat is older than SUITE_RUN_STALE_SECONDS; "
        f"fail those already requeued {services.MAX_REQUEUES} times."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        for line in recover_runs() or ["No stale runs."]:
            self.stdout.write(line)
