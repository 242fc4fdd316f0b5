"""Background work: a suite run's chunks, executed by `manage.py db_worker` (django-tasks-db).

A run is one task per chunk (`execute_run_chunk`), so several workers share a large run; a
task carries only the chunk's (or, for `execute_suite_run`, the run's) id; the rows hold
everything else, so a queued task stays valid however long it waits, and the page polls the
row, not the task. The services
enqueue it (`services.run_start`); it calls the runner, and imports nothing above it.

A worker asked to stop (SIGTERM) while it runs a chunk commits what it compiled and hands
the chunk back with a new task for it (`stopping`, `runner.chunk_execute`), so another
worker resumes it at once instead of after the heartbeat's requeue.
"""

from __future__ import annotations

import os
import socket
from typing import Any

from django.tasks import task

from workers import stopping

from . import runner


@task
def execute_run_chunk(chunk_id: int) -> dict[str, Any]:
    with stopping.handing_back_on_signals():
        run = runner.chunk_execute(chunk_id=chunk_id, worker=_worker_name(), hand_back=_requeue)
    return {"run": run.pk, "chunk": chunk_id, "status": run.status}


def _requeue(chunk_id: int) -> None:
    execute_run_chunk.enqueue(chunk_id)


def _worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


@task
def execute_suite_run(run_id: int) -> dict[str, Any]:
    """Every queued chunk of the run in one task (tasks queued before runs had chunks)."""
    with stopping.handing_back_on_signals():
        run = runner.run_execute(run_id=run_id, hand_back=_requeue)
    return {"run": run.pk, "status": run.status, "summary": run.summary}


@task
def execute_mutation_run(run_id: int) -> dict[str, Any]:
    """A suite-strength run (`strength_runner.mutation_execute`): the version's contract
    mutated in every way the engine knows, the scenarios run against each mutant."""
    # Imported here: the mutation engine is loaded by the worker that runs one, not by
    # every process that imports the tasks to enqueue them.
    from . import strength_runner

    run = strength_runner.mutation_execute(run_id=run_id)
    return {"strength_run": run.pk, "status": run.status}
