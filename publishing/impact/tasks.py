"""Background work of the impact report: computing and storing it
(`computing.report_compute`), run by `manage.py db_worker` like a suite run. The task carries
only the version's id.

A worker asked to stop lets the report in hand finish (it is one computation, stored whole);
stopped at once (a second signal), it puts the report back in the queue first
(`workers.stopping`), with a new task for it.
"""

from __future__ import annotations

from typing import Any

from django.tasks import task

from workers import stopping

from . import computing


@task
def compute_impact_report(version_id: int) -> dict[str, Any]:
    with stopping.handing_back_on_signals():
        report = computing.report_compute(
            version_id=version_id, hand_back=compute_impact_report.enqueue
        )
    return {"version": version_id, "status": report.status if report else None}
