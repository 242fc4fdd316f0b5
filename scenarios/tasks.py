"""Background work: a suite run, executed by `manage.py db_worker` (django-tasks-db).

The task carries only the run's id; the run row holds everything else, so a queued task
stays valid however long it waits, and the page polls the row, not the task. The services
enqueue it (`services.run_start`); it calls the runner, and imports nothing above it.
"""

from __future__ import annotations

from typing import Any

from django.tasks import task

from . import runner


@task
def execute_suite_run(run_id: int) -> dict[str, Any]:
    run = runner.run_execute(run_id=run_id)
    return {"run": run.pk, "status": run.status, "summary": run.summary}
