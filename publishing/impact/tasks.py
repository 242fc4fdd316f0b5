"""Background work of the impact report, run by `manage.py db_worker` like a suite run: the
report's task claims it and queues a task per slice of its scenarios
(`computing.report_compute`), and each slice's task compiles its share (`chunks.
chunk_execute`), so every worker takes part. The tasks carry only ids.

A worker asked to stop lets the slice in hand finish; stopped at once (a second signal), it
puts the slice, or the report, back in the queue first (`workers.stopping`).
"""

from __future__ import annotations

from typing import Any

from django.tasks import task

from workers import stopping

from . import chunks, computing


@task
def compute_impact_report(version_id: int) -> dict[str, Any]:
    with stopping.handing_back_on_signals():
        report = computing.report_compute(
            version_id=version_id,
            hand_back=compute_impact_report.enqueue,
            enqueue_chunk=compute_impact_chunk.enqueue,
        )
    return {"version": version_id, "status": report.status if report else None}


@task
def compute_impact_chunk(chunk_id: int) -> dict[str, Any]:
    with stopping.handing_back_on_signals():
        report = chunks.chunk_execute(chunk_id=chunk_id, hand_back=compute_impact_chunk.enqueue)
    return {"chunk": chunk_id, "status": report.status if report else None}
