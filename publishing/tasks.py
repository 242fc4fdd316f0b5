"""Background work of `publishing`: replaying recorded decisions against a version, executed
by `manage.py db_worker` (django-tasks-db). The task carries only the replay's id; the row
holds the rest, and the impact page reads the row."""

from __future__ import annotations

from typing import Any

from django.tasks import task


@task
def replay_recorded_decisions(replay_id: int) -> dict[str, Any]:
    from . import replay

    row = replay.replay_execute(replay_id=replay_id)
    return {"replay": row.pk, "status": row.status}
