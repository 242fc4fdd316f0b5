"""`evidence-compiler serve`: decisions over HTTP/JSON for services in any language.

    POST /v1/decide   {"request", "candidates", "directory"?, "receipt"?, "decision_id"?}
                      -> {"output", "receipt"?, "bundle": {"decision_type", "version", "sha256"}}
    GET  /healthz     200 {"status": "ok", "bundle": {...}} once a bundle verified, else 503
    GET  /metrics     Prometheus text

A WSGI application (`decision_app`) over a `BundleStore`, so the bundle `pull` replaces is
picked up without a restart, served by waitress (`serve`). Needs the extra
`evidence-compiler[serve]` (waitress, prometheus-client); OpenTelemetry spans are added when
`opentelemetry-api` is installed, and cost nothing otherwise.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import importlib
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TextIO

import orjson

from compiler._errors import InvalidInput
from compiler_tools._runtime import BundleStore, NoBundle, bundle_age, decide
from compiler_trust import compact_receipt

logger = logging.getLogger(__name__)
NEEDS_SERVE = "serve needs its extra: pip install 'evidence-compiler[serve]'"
DEFAULT_MAX_BODY = 8 * 1024 * 1024
DEFAULT_PORT = 8181
COMPILE_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)

StartResponse = Callable[[str, list[tuple[str, str]]], Any]
STATUS = {
    200: "200 OK",
    400: "400 Bad Request",
    404: "404 Not Found",
    405: "405 Method Not Allowed",
    413: "413 Content Too Large",
    500: "500 Internal Server Error",
    503: "503 Service Unavailable",
}


class _Failure(Exception):
    def __init__(self, status: int, code: str, message: str, errors: list | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.errors = status, code, errors

    def body(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": str(self)}
        if self.errors is not None:
            error["errors"] = self.errors
        return {"error": error}


class _Metrics:
    """The server's Prometheus metrics, in a registry of their own."""

    def __init__(self, store: BundleStore) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        self.registry = CollectorRegistry()
        self.decisions = Counter(
            "evidence_decisions", "Decisions made, by result", ["result"], registry=self.registry
        )
        self.refusals = Counter(
            "evidence_refusals",
            "Compiles refused, by the refusal's reason",
            ["reason"],
            registry=self.registry,
        )
        self.errors = Counter(
            "evidence_request_errors",
            "Requests answered with an error, by code",
            ["code"],
            registry=self.registry,
        )
        self.compile_seconds = Histogram(
            "evidence_compile_seconds",
            "Time to decide one request (validation, compile, receipt)",
            buckets=COMPILE_BUCKETS,
            registry=self.registry,
        )
        age = Gauge(
            "evidence_bundle_age_seconds",
            "Seconds since the loaded bundle was published (grows while no newer one arrives)",
            registry=self.registry,
        )
        age.set_function(lambda: _age_or_nan(store))

    def text(self) -> bytes:
        from prometheus_client import generate_latest

        return generate_latest(self.registry)


def decision_app(
    store: BundleStore, *, max_body: int = DEFAULT_MAX_BODY, metrics: _Metrics | None = None
) -> Callable[..., Any]:
    """The WSGI application answering decisions against `store`'s current bundle."""
    metrics = metrics or _Metrics(store)
    tracer = _tracer()

    def app(environ: Mapping[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        path, method = environ.get("PATH_INFO", ""), environ.get("REQUEST_METHOD", "GET")
        try:
            if path == "/v1/decide":
                _allow(method, "POST")
                with tracer("evidence.decide") as span:
                    status, body = 200, _decide(store, metrics, _read_json(environ, max_body))
                    span("evidence.bundle.version", body["bundle"]["version"])
                    span("evidence.result", body["output"]["result"])
            elif path == "/healthz":
                _allow(method, "GET")
                status, body = 200, {"status": "ok", "bundle": _bundle_json(store)}
            elif path == "/metrics":
                _allow(method, "GET")
                content_type = "text/plain; version=0.0.4; charset=utf-8"
                return _respond(start_response, 200, metrics.text(), content_type)
            else:
                raise _Failure(404, "not_found", f"no such path: {path}")
        except _Failure as failure:
            metrics.errors.labels(failure.code).inc()
            status, body = failure.status, failure.body()
        except Exception:  # a bug must still answer JSON, and be in the server's log
            logger.exception("decision failed")
            metrics.errors.labels("internal_error").inc()
            status, body = 500, _Failure(500, "internal_error", "the decision failed").body()
        return _respond(start_response, status, orjson.dumps(body), "application/json")

    return app


def serve(
    store: BundleStore,
    *,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    threads: int = 4,
    max_body: int = DEFAULT_MAX_BODY,
    stdout: TextIO | None = None,
) -> None:
    """Serve `store` with waitress until the process ends; prints the address it listens on
    (the port chosen when `port` is 0)."""
    waitress = importlib.import_module("waitress")  # an optional extra, without type stubs
    sockets: dict[int, Any] = {}
    metrics = _Metrics(store)
    server = waitress.create_server(
        decision_app(store, max_body=max_body, metrics=metrics),
        map=sockets,
        host=host,
        port=port,
        threads=threads,
        # waitress refuses a body of this size or more itself, before buffering the rest of
        # it (a declared Content-Length at once, a chunked body as it passes the limit).
        max_request_body_size=max_body + 1,
        ident="evidence-compiler",
    )
    # Its refusals (an oversized body, a malformed request) are answered in the server's
    # JSON shape rather than waitress's plain text.
    for listener in list(sockets.values()):
        if hasattr(listener, "channel_class"):
            listener.channel_class = _json_error_channel(metrics, max_body)
    if stdout is not None:
        print(f"serving decisions on http://{host}:{server.effective_port}", file=stdout)
        stdout.flush()
    server.run()


def missing_extra() -> str | None:
    """`NEEDS_SERVE` when the extra's packages are not installed."""
    import importlib.util

    if all(importlib.util.find_spec(name) for name in ("prometheus_client", "waitress")):
        return None
    return NEEDS_SERVE


WAITRESS_CODES = {400: "bad_request", 413: "too_large", 431: "headers_too_large"}


def _json_error_channel(metrics: _Metrics, max_body: int) -> type:
    """waitress's connection class, answering the requests waitress refuses itself as JSON."""
    channel = importlib.import_module("waitress.channel")
    task = importlib.import_module("waitress.task")

    class JsonErrorTask(task.ErrorTask):  # type: ignore[name-defined]
        def execute(self) -> None:
            error = self.request.error
            code = WAITRESS_CODES.get(error.code, "bad_request")
            message = (
                _too_large(max_body) if code == "too_large" else f"{error.reason}: {error.body}"
            )
            body = orjson.dumps(_Failure(error.code, code, message).body())
            metrics.errors.labels(code).inc()
            self.status = f"{error.code} {error.reason}"
            self.response_headers.append(("Content-Type", "application/json"))
            self.set_close_on_finish()
            self.content_length = len(body)
            self.write(body)

    class JsonErrorChannel(channel.HTTPChannel):  # type: ignore[name-defined]
        error_task_class = JsonErrorTask

    return JsonErrorChannel


def _too_large(max_body: int) -> str:
    return f"the body is larger than {max_body:,} bytes, the server's --max-body"


# --------------------------------------------------------------------------- a request


def _decide(store: BundleStore, metrics: _Metrics, data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise _Failure(400, "invalid_input", "the body must be a JSON object")
    unknown = sorted(set(data) - {"request", "candidates", "directory", "receipt", "decision_id"})
    if unknown:
        raise _Failure(400, "invalid_input", f"unknown member(s): {', '.join(unknown)}")
    receipt = data.get("receipt", False)
    if not isinstance(receipt, bool):
        raise _Failure(400, "invalid_input", "receipt must be true or false")
    decision_id = data.get("decision_id")
    if decision_id is not None and not (isinstance(decision_id, str) and decision_id):
        raise _Failure(400, "invalid_input", "decision_id must be a non-empty string")
    candidates = data.get("candidates")
    if not isinstance(candidates, list):
        raise _Failure(400, "invalid_input", "candidates must be a list")
    started = time.perf_counter()
    try:
        bundle = store.current()
        decision = decide(
            bundle,
            data.get("request"),  # type: ignore[arg-type]  # validated by decide
            candidates,
            directory=data.get("directory"),
            receipt=receipt,
            decision_id=decision_id,
        )
    except NoBundle as exc:
        raise _Failure(503, "no_bundle", str(exc)) from None
    except InvalidInput as exc:
        raise _Failure(400, "invalid_input", "the input is invalid", exc.errors) from None
    metrics.compile_seconds.observe(time.perf_counter() - started)
    output = decision.output
    metrics.decisions.labels(str(output.result)).inc()
    if output.refusal is not None:
        metrics.refusals.labels(output.refusal.reason).inc()
    body: dict[str, Any] = {"output": output.to_json(), "bundle": _bundle_json(store, bundle)}
    if decision.receipt is not None:
        # The compact form: what the workbench's POST /api/v1/decisions takes 500 at a time.
        body["receipt"] = compact_receipt(decision.receipt)
    return body


def _read_json(environ: Mapping[str, Any], max_body: int) -> Any:
    declared = environ.get("CONTENT_LENGTH") or ""
    if declared and (not declared.isdigit() or int(declared) > max_body):
        raise _Failure(413, "too_large", _too_large(max_body))
    data = environ["wsgi.input"].read(max_body + 1)
    if len(data) > max_body:
        raise _Failure(413, "too_large", _too_large(max_body))
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise _Failure(400, "bad_json", f"the body is not JSON: {exc}") from None


def _allow(method: str, allowed: str) -> None:
    if method != allowed:
        raise _Failure(405, "method_not_allowed", f"use {allowed}")


def _bundle_json(store: BundleStore, bundle: Any = None) -> dict[str, str]:
    try:
        bundle = bundle or store.current()
    except NoBundle as exc:
        raise _Failure(503, "no_bundle", str(exc)) from None
    manifest = bundle.manifest
    return {
        "decision_type": manifest.decision_type,
        "version": manifest.version,
        "sha256": bundle.sha256,
    }


def _respond(
    start_response: StartResponse, status: int, body: bytes, content_type: str
) -> list[bytes]:
    start_response(
        STATUS[status], [("Content-Type", content_type), ("Content-Length", str(len(body)))]
    )
    return [body]


def _age_or_nan(store: BundleStore) -> float:
    try:
        return bundle_age(store.current(), dt.datetime.now(dt.UTC))
    except NoBundle:
        return float("nan")


# --------------------------------------------------------------------------- tracing


Span = Callable[[str, Any], None]


def _tracer() -> Callable[[str], contextlib.AbstractContextManager[Span]]:
    """A span per decision when OpenTelemetry is installed (configured by the host process,
    e.g. `opentelemetry-instrument`); otherwise a context that records nothing."""
    try:
        trace = importlib.import_module("opentelemetry.trace")  # optional, never required
    except ImportError:

        @contextlib.contextmanager
        def nothing(name: str) -> Iterator[Span]:
            yield lambda key, value: None

        return nothing
    tracer = trace.get_tracer("evidence-compiler")

    @contextlib.contextmanager
    def span(name: str) -> Iterator[Span]:
        with tracer.start_as_current_span(name) as current:
            yield current.set_attribute

    return span
