from __future__ import annotations

from django.apps import AppConfig


class WorkersConfig(AppConfig):
    """The worker's heartbeat, stopping and recovery registry. The apps above register
    their stale-work checkers and housekeeping jobs in their own `ready`."""

    name = "workers"
    verbose_name = "Task workers"
