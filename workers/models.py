from __future__ import annotations

from django.db import models


class WorkerHeartbeat(models.Model):
    """The last time each `db_worker` process said it was alive (`workers.heartbeat`);
    `/readyz` is ready only while some worker's beat is recent."""

    worker = models.CharField(max_length=200, unique=True)
    seen_at = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return f"{self.worker} at {self.seen_at:%Y-%m-%d %H:%M:%S}"
