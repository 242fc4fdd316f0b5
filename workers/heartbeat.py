"""The worker's heartbeat: a thread in each `manage.py db_worker` process that writes the time
to its `WorkerHeartbeat` row every WORKER_HEARTBEAT_SECONDS (default 10), so the web process's
readiness check (`/readyz`) can tell that some worker is there to drain the queue.

A thread rather than the worker's loop: a suite run can keep the loop busy for minutes, and a
busy worker is alive. A killed process stops beating; its row goes stale and is pruned a day
later by the next worker to start.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable
from datetime import timedelta

from django.conf import settings
from django.db import DatabaseError, connections
from django.utils import timezone

from .models import WorkerHeartbeat

logger = logging.getLogger(__name__)

PRUNE_AFTER = timedelta(days=1)


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def beat(worker: str) -> None:
    WorkerHeartbeat.objects.update_or_create(worker=worker, defaults={"seen_at": timezone.now()})


def latest_beat():
    """When the most recent heartbeat of any worker was written, or None."""
    row = WorkerHeartbeat.objects.order_by("-seen_at").first()
    return row.seen_at if row else None


def start() -> threading.Event:
    """Beat now, then keep beating in a daemon thread until the returned event is set."""
    worker = worker_name()
    WorkerHeartbeat.objects.filter(seen_at__lt=timezone.now() - PRUNE_AFTER).delete()
    beat(worker)
    interval = float(getattr(settings, "WORKER_HEARTBEAT_SECONDS", 10))
    return every(interval, lambda: beat(worker), name="worker-heartbeat")


def every(interval: float, write: Callable[[], object], *, name: str) -> threading.Event:
    """Call `write` every `interval` seconds in a daemon thread (its own database connection,
    closed after each call, so no connection outlives a beat) until the returned event is
    set. A database error is logged, and the next beat tries again."""
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(interval):
            try:
                write()
            except DatabaseError:
                logger.exception("The %s could not be written", name.replace("-", " "))
            finally:
                connections.close_all()

    threading.Thread(target=loop, name=name, daemon=True).start()
    return stop
