"""Liveness and readiness for load balancers and orchestrators.

`/healthz` says the process answers (no database: a database outage must not get every web
process restarted). `/readyz` says it can serve: the database answers a query and some task
worker's heartbeat (workers.heartbeat) is newer than WORKER_STALE_SECONDS (default 60),
else 503 naming the failing check. Both answer before host validation, the HTTPS redirect
and sessions, so a probe needs neither an allowed Host header nor TLS.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from django.conf import settings
from django.db import DatabaseError, connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone

from workers import heartbeat

DEFAULT_WORKER_STALE_SECONDS = 60.0


def database_check() -> str | None:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError as error:
        return f"the database does not answer: {error.__class__.__name__}"
    return None


def worker_check() -> str | None:
    stale = float(getattr(settings, "WORKER_STALE_SECONDS", DEFAULT_WORKER_STALE_SECONDS))
    try:
        latest = heartbeat.latest_beat()
    except DatabaseError as error:
        return f"the worker heartbeat cannot be read: {error.__class__.__name__}"
    if latest is None:
        return "no task worker has ever reported (start `manage.py db_worker`)"
    age = timezone.now() - latest
    if age > timedelta(seconds=stale):
        return f"no task worker heartbeat for {age.total_seconds():.0f}s (limit {stale:.0f}s)"
    return None


def healthz() -> HttpResponse:
    return JsonResponse({"status": "ok"})


def readyz() -> HttpResponse:
    database = database_check()
    worker = "not checked: the database does not answer" if database else worker_check()
    checks = {"database": database, "worker": worker}
    failing = any(checks.values())
    body = {
        "status": "unavailable" if failing else "ok",
        "checks": {name: problem or "ok" for name, problem in checks.items()},
    }
    return JsonResponse(body, status=503 if failing else 200)


PROBES: dict[str, Callable[[], HttpResponse]] = {"/healthz": healthz, "/readyz": readyz}


class HealthMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        probe = PROBES.get(request.path_info.rstrip("/"))
        if probe is None or request.method not in ("GET", "HEAD"):
            return self.get_response(request)
        response = probe()
        response["Cache-Control"] = "no-store"
        return response
