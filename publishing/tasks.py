"""Background work of `publishing`: replaying recorded decisions against a version, executed
by `manage.py db_worker` (django-tasks-db), one task per slice of the receipts so that every
worker takes a share. A task carries only an id; the rows hold the rest, and the impact page
reads the replay's row. Queued by `publishing.replay`; the work
itself is `publishing.replaying`."""

from __future__ import annotations

from typing import Any

from django.tasks import task

from . import replaying


@task
def replay_chunk(chunk_id: int) -> dict[str, Any]:
    """One slice of a replay's receipts; each worker takes slices as it is free."""
    chunk = replaying.chunk_execute(chunk_id=chunk_id)
    return {"chunk": chunk.pk, "status": chunk.status}


@task
def replay_recorded_decisions(replay_id: int) -> dict[str, Any]:
    row = replaying.replay_execute(replay_id=replay_id)
    return {"replay": row.pk, "status": row.status}
