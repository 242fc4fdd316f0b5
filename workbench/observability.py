"""Structured logs: one JSON line per request, and every other record as JSON with the id of
the request it belongs to (so a 500's traceback and its request line share `request_id`).

The production settings send the root logger through `JsonFormatter` to stdout; the line per
request comes from `RequestLogMiddleware` on the `workbench.requests` logger.
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from collections.abc import Callable
from contextvars import ContextVar
from datetime import UTC, datetime

from django.http import HttpRequest, HttpResponse
from django.utils.functional import empty

logger = logging.getLogger("workbench.requests")

REQUEST_ID_HEADER = "X-Request-ID"
# A proxy's id is kept when it is a plausible token; anything else is replaced, so a client
# cannot write arbitrary text into the logs.
ACCEPTABLE_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")

current_request_id: ContextVar[str | None] = ContextVar("current_request_id", default=None)

# Attributes every LogRecord has; whatever else a record carries came in `extra=`.
STANDARD_ATTRIBUTES = frozenset(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {
    "message",
    "asctime",
    "request_id",
}


def request_id_from(request: HttpRequest) -> str:
    offered = request.headers.get(REQUEST_ID_HEADER, "")
    return offered if ACCEPTABLE_REQUEST_ID.match(offered) else uuid.uuid4().hex


def signed_in_username(request: HttpRequest) -> str | None:
    """The user's name if the request already looked the user up (never forces a query:
    a health probe or a failing database must not be made worse by logging)."""
    user = getattr(request, "user", None)
    if user is None or getattr(user, "_wrapped", None) is empty:
        return None
    return user.get_username() if user.is_authenticated else None


class TracedRequest(HttpRequest):
    """A request once RequestLogMiddleware has given it its id."""

    request_id: str


class RequestLogMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: TracedRequest) -> HttpResponse:
        request_id = request_id_from(request)
        request.request_id = request_id
        token = current_request_id.set(request_id)
        started = time.perf_counter()
        try:
            response = self.get_response(request)
            response[REQUEST_ID_HEADER] = request_id
            match = request.resolver_match
            logger.info(
                "%s %s %s",
                request.method,
                request.path,
                response.status_code,
                extra={
                    "request_id": request_id,
                    "method": request.method,
                    "path": request.path,
                    "status": response.status_code,
                    "view": match.view_name if match else None,
                    "user": signed_in_username(request),
                    "duration_ms": round((time.perf_counter() - started) * 1000, 2),
                },
            )
            return response
        finally:
            current_request_id.reset(token)


class RequestContextFilter(logging.Filter):
    """Stamps each record with the id of the request being served, if any."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "request_id", None) is None:
            record.request_id = current_request_id.get()
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, request_id, the record's
    `extra` fields, and `exception` (the formatted traceback) when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", None),
        }
        for key, value in record.__dict__.items():
            if key not in STANDARD_ATTRIBUTES and key != "request":
                line[key] = value
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str)
