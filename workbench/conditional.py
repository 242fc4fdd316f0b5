"""ETags and 304s for the heavy read-only pages, decided before the view runs.

A page in `ETAGS` gets an ETag made from what it shows, read from a few stored values (a
bundle's sha256, a finished run's row, a ready impact report's hash) instead of the page
itself; a request whose `If-None-Match` names it is answered 304 without rendering.
Django's `ConditionalGetMiddleware` would hash the rendered body instead, which saves only
bandwidth, and never matches a page that carries a per-request CSRF token or CSP nonce.

A page is personal and carries secrets, so the ETag of a page (not of a bundle, the same
for everyone who may read it) also mixes in, keyed with `SECRET_KEY`:

* who asks and what they may do: the user, superuser flag and site groups; their roles on
  a type are granted by audited actions, so the latest audit event's id covers them (and
  every other audited change: scenarios, corpora, reviews, the catalogue);
* their CSRF secret: the cached page's form tokens stay valid only while it is unchanged
  (signing in again rotates it);
* the release (the templates' and the apps' files), the query string and whether htmx
  asked (htmx asks for a fragment of the same URL).

The permission check runs first, in the same selector the view uses: a person who may no
longer see the page gets the view's 404, never a 304. The object read for the ETag (the
version, the run) is kept on the request for the view (`version_read`, `run_read`), which
would otherwise read it again. Pages with a message waiting are not
made conditional (the message shows once). A 304 carries no new Content-Security-Policy,
so the cached page keeps the policy whose nonce its script tag carries. Answers are marked
`Cache-Control: private, no-cache` and `Vary: Cookie, HX-Request`: a browser revalidates
every time, and no shared cache keeps them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from importlib import import_module
from pathlib import Path
from typing import Any

from django.contrib import messages
from django.core.exceptions import ObjectDoesNotExist
from django.db.models import Max
from django.http import HttpRequest, HttpResponse, HttpResponseNotModified
from django.template import engines
from django.utils.cache import patch_cache_control, patch_vary_headers
from django.utils.crypto import salted_hmac
from django.utils.http import parse_etags, quote_etag

from contracts import selectors
from contracts.models import AuditEvent, Bundle, StoredImpactReport
from publishing.models import DecisionReceipt, ReceiptReplay
from scenarios.selectors import run_for_user

# A page's state: what it shows, as stored values, or None when it is not to be conditional
# (a run still running, a report being computed). Raises DoesNotExist where the person may
# not see it (the view then answers as it always does).
State = Callable[..., "tuple[Any, ...] | None"]


def read_once[T](request: HttpRequest, key: tuple[Any, ...], read: Callable[[], T]) -> T:
    """`read()` once per request and `key`: the object a page's ETag was made from is the
    one its view shows (the version, the run), not read a second time. An object the person
    may not see raises as `read` does, and nothing is kept."""
    reads: dict[tuple[Any, ...], Any] = request.__dict__.setdefault("_conditional_reads", {})
    if key not in reads:
        reads[key] = read()
    return reads[key]


def version_read(request: HttpRequest, key: str, number: int) -> Any:
    """The version at `key`/`number` as `selectors.version_for_user` reads it for this
    person, once per request (`read_once`)."""
    return read_once(
        request,
        ("version", key, number),
        lambda: selectors.version_for_user(user=request.user, key=key, number=number),
    )


def run_read(request: HttpRequest, key: str, pk: int) -> Any:
    """The run as `run_for_user` reads it for this person, once per request."""
    return read_once(
        request, ("run", key, pk), lambda: run_for_user(user=request.user, key=key, pk=pk)
    )


def _version_bundle(request: HttpRequest, key: str, number: int) -> tuple[Any, ...] | None:
    version = version_read(request, key, number)
    # The hash alone: the bundle's bytes (megabytes with a large suite) stay in the database.
    sha256 = Bundle.objects.filter(version=version).values_list("sha256", flat=True).first()
    return None if sha256 is None else (sha256,)


def _finished_run(request: HttpRequest, key: str, pk: int) -> tuple[Any, ...] | None:
    run = run_read(request, key, pk)
    if run.is_active:
        return None
    return (run.pk, run.status, run.finished_at, run.requeues, run.version.status)


def _ready_impact_report(request: HttpRequest, key: str, number: int) -> tuple[Any, ...] | None:
    version = version_read(request, key, number)
    latest = (
        StoredImpactReport.objects.filter(version=version)
        .order_by("-pk")
        .values_list("pk", "status", "report_sha256", "inputs_sha256")
        .first()
    )
    if latest is None or latest[1] != StoredImpactReport.Status.READY:
        return None
    replay = (
        ReceiptReplay.objects.filter(version=version)
        .order_by("-pk")
        .values_list("pk", "status", "done", "finished_at")
        .first()
    )
    receipts = DecisionReceipt.objects.filter(decision_type_id=version.decision_type_id)
    return (
        version.pk,
        version.status,
        version.lock_version,
        latest,
        replay,
        receipts.aggregate(last=Max("pk"))["last"],
    )


# URL name → (its state, whether the page is personal). The bundle's ETag is its sha256, as
# the API's is: the same bytes for everyone who may read it.
ETAGS: dict[str, tuple[State, bool]] = {
    "version_bundle": (_version_bundle, False),
    "scenarios:run_detail": (_finished_run, True),
    "version_impact": (_ready_impact_report, True),
}


APPS = ("workbench", "contracts", "scenarios", "publishing", "workers")


@functools.cache
def release() -> str:
    """What the code that renders the pages is: the templates' and the apps' files (names,
    sizes, modification times), read once per process, so a deployment's new templates or
    views never meet an ETag of the old ones."""
    folders = [Path(d) for engine in engines.all() for d in engine.template_dirs]
    folders += [Path(str(import_module(app).__file__)).parent for app in APPS]
    stats = sorted(
        f"{path}:{path.stat().st_size}:{path.stat().st_mtime_ns}"
        for folder in folders
        if folder.is_dir()
        for path in folder.rglob("*")
        if path.suffix in {".html", ".py", ".txt"}
    )
    return salted_hmac(
        "workbench.conditional.release", "\n".join(stats), algorithm="sha256"
    ).hexdigest()


def _personal(request: HttpRequest) -> tuple[Any, ...]:
    user = request.user
    groups = sorted(user.groups.values_list("pk", flat=True))
    last_change = AuditEvent.objects.aggregate(last=Max("pk"))["last"]
    return (
        user.pk,
        user.is_superuser,
        groups,
        last_change,
        request.META.get("CSRF_COOKIE", ""),
        release(),
        request.META.get("QUERY_STRING", ""),
        request.headers.get("HX-Request") == "true",
    )


def page_etag(request: HttpRequest, name: str, kwargs: dict[str, Any]) -> str | None:
    """The ETag of the page `name` for this request, or None (not a conditional page, not
    in a state to be one, or not visible to this person)."""
    entry = ETAGS.get(name)
    if entry is None or not request.user.is_authenticated:
        return None
    state_of, personal = entry
    try:
        state = state_of(request, **kwargs)
    except ObjectDoesNotExist:
        return None
    if state is None:
        return None
    if not personal:
        return quote_etag(str(state[0]))
    if len(messages.get_messages(request)):
        return None
    parts = repr((name, state, _personal(request)))
    return quote_etag(
        salted_hmac("workbench.conditional.page", parts, algorithm="sha256").hexdigest()
    )


def _matches(request: HttpRequest, etag: str) -> bool:
    """RFC 9110's weak comparison, as `If-None-Match` asks (gzip makes the tag weak)."""
    asked = parse_etags(request.headers.get("If-None-Match", ""))
    bare = etag.removeprefix("W/")
    return "*" in asked or any(tag.removeprefix("W/") == bare for tag in asked)


class ConditionalPagesMiddleware:
    """Answers 304 for a page in `ETAGS` whose ETag the request names; else lets the view
    answer and puts the ETag on its 200. Last in MIDDLEWARE: it needs the resolved URL, the
    signed-in user and the CSRF secret."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        etag = getattr(request, "_page_etag", None)
        if etag is not None and response.status_code == 200:
            response.headers["ETag"] = etag
            _private(response)
        return response

    def process_view(
        self, request: HttpRequest, view: Any, args: Any, kwargs: dict[str, Any]
    ) -> HttpResponse | None:
        if request.method not in ("GET", "HEAD") or request.resolver_match is None:
            return None
        etag = page_etag(request, request.resolver_match.view_name, kwargs)
        if etag is None:
            return None
        if not _matches(request, etag):
            request._page_etag = etag  # type: ignore[attr-defined]
            return None
        response = HttpResponseNotModified()
        response.headers["ETag"] = etag
        _private(response)
        # No policy on the 304: the browser keeps the cached page's, whose nonce its script
        # tag carries (what `csp_override({})` does for a view).
        response._csp_config = response._csp_ro_config = {}  # type: ignore[attr-defined]
        return response


def _private(response: HttpResponse) -> None:
    patch_cache_control(response, private=True, no_cache=True)
    patch_vary_headers(response, ("Cookie", "HX-Request"))
