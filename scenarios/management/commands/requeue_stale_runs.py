"""Requeue suite runs whose worker stopped (killed, say); fail those requeued twice already.

`manage.py db_worker` does this as it starts and every STALE_WORK_CHECK_SECONDS after, and the
run page as it is viewed; this command does it on demand."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from scenarios import services
from scenarios.models import SuiteRun


class Command(BaseCommand):
    help = (
        "Requeue running suite runs whose heartbeat is older than SUITE_RUN_STALE_SECONDS; "
        f"fail those already requeued {services.MAX_REQUEUES} times."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        report(self.stdout)


def report(stdout: Any) -> None:
    """Requeue stale runs and say what happened to each."""
    runs = services.runs_requeue_stale()
    if not runs:
        stdout.write("No stale runs.")
    for run in runs:
        stdout.write(recovered(run))


def recovered(run: SuiteRun) -> str:
    """What a stale run's recovery did: requeued (how many times) or failed (why)."""
    if run.status == run.Status.FAILED:
        return f"Run {run.pk}: failed: {run.error}"
    return (
        f"Run {run.pk}: requeued ({run.requeues} of {services.MAX_REQUEUES}) after "
        f"{run.resumed_from} of {run.total} scenarios"
    )
