"""Background work of the impact report: computing and storing it (`stored.report_compute`),
run by `manage.py db_worker` like a suite run. The task carries only the version's id."""

from __future__ import annotations

from typing import Any

from django.tasks import task

from . import stored


@task
def compute_impact_report(version_id: int) -> dict[str, Any]:
    report = stored.report_compute(version_id=version_id)
    return {"version": version_id, "status": report.status if report else None}
