"""What a suite run and a suite-strength run share: work queued for the worker, whose row
says how far it got (`done` of `total`) and whether it is still going."""

from __future__ import annotations

from typing import ClassVar

from django.db import models


class RunStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    FINISHED = "finished", "Finished"
    FAILED = "failed", "Failed"


class RunProgress:
    """Mixed into a model with `status` (a `RunStatus`), `done` and `total`."""

    Status = RunStatus
    ACTIVE: ClassVar[frozenset[str]] = frozenset({RunStatus.QUEUED, RunStatus.RUNNING})

    status: str
    done: int
    total: int

    @property
    def is_active(self) -> bool:
        return self.status in self.ACTIVE

    @property
    def percent(self) -> int:
        if self.status == RunStatus.FINISHED:
            return 100
        return round(100 * self.done / self.total) if self.total else 0
