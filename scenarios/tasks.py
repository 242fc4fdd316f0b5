"""Background work: a suite run, executed by `manage.py db_worker` (django-tasks-db).

The task carries only the run's id; the run row holds everything else, so a queued task
stays valid however long it waits, and the page polls the row, not the task.
"""

from __future__ import annotations

from typing import Any

from django.tasks import task


@task
def execute_suite_run(run_id: int) -> dict[str, Any]:
    from . import services

    run = services.run_execute(run_id=run_id)
    return {"run": run.pk, "status": run.status, "summary": run.summary}
