"""Background work of `publishing`: replaying recorded decisions against a version, executed
by `manage.py db_worker` (django-tasks-db). The task carries only the replay's id; the row
holds the rest, and the impact page reads the row. Queued by `publishing.replay`; the work
itself is `publishing.replaying`."""

from __future__ import annotations

from typing import Any

from django.tasks import task

from . import replaying


@task
def replay_recorded_decisions(replay_id: int) -> dict[str, Any]:
    row = replaying.replay_execute(replay_id=replay_id)
    return {"replay": row.pk, "status": row.status}
