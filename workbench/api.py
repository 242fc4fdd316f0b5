"""The machine API under `/api/v1/` (django-ninja): what production services call.

    GET  /api/v1/types                          the token's decision types, latest version + hash
    GET  /api/v1/types/{key}/bundle             the latest published bundle (ETag, 304)
    GET  /api/v1/types/{key}/versions/{n}/bundle  version n's bundle (ETag, 304)
    GET  /api/v1/types/{key}/tests              the latest bundle's test suite (ETag, 304)
    GET  /api/v1/types/{key}/versions/{n}/tests   version n's test suite (ETag, 304)
    GET  /api/v1/types/{key}/keys               the key set of the keys that signed its bundles
    POST /api/v1/decisions                      a batch of decision receipts
    GET  /api/v1/openapi.json                   the OpenAPI description (no token needed)

Every call carries `Authorization: Bearer <service token>` (`publishing.tokens`). No token, an
unknown one or a revoked one: 401. A decision type outside the token's scope answers exactly
what a type that does not exist answers (404), so a token learns nothing about other types.
A token acts for its creator as they are now: at every call the creator must still hold, on
the type asked for, the role the call needs (`tokens.TOKEN_NEEDS`: viewer to read, owner to
record receipts), or the call answers 403 saying why (`tokens.CreatorLost`).
Each call is recorded (`ApiCall`: token, endpoint, type, status). The API authenticates by
token only, never by the session cookie, so it needs no CSRF token (ninja checks CSRF only
for cookie authentication). docs/api.md describes it.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

import orjson
from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.db import IntegrityError
from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern
from ninja import NinjaAPI, Schema, Status
from ninja.errors import AuthenticationError
from ninja.parser import Parser
from ninja.security import HttpBearer
from pydantic import Field

from contracts.models import Bundle, BundleTestSuite, DecisionType
from publishing import receipts, tokens
from publishing.models import ServiceToken
from workbench import api_body
from workbench.http import ApiRequest

# Messages tests assert on.
NO_SUCH_TYPE = "No decision type '{key}' is visible to this token."
NOTHING_PUBLISHED = "Decision type '{key}' has no published version."
NO_SUCH_VERSION = "Decision type '{key}' has no bundle for version {number}."
NO_TEST_SUITE = (
    "Version {number} of '{key}' has no separate test suite here: its bundle carries its "
    "scenarios itself (format 2), it has no scenarios, or it was imported without its suite."
)
BATCH_TOO_LARGE = "A batch holds at most {limit} receipts; this one holds {count}."
LOST_RACE = "Another batch recorded one of these decision ids at the same moment; post again."
UNAUTHORIZED = "A valid service token is required: Authorization: Bearer <token>."

RECEIPT_BATCH_MAX = getattr(settings, "API_RECEIPT_BATCH_MAX", 500)


class ServiceTokenAuth(HttpBearer):
    """`Authorization: Bearer <token>`; a failed attempt is recorded before ninja answers 401."""

    def __call__(self, request: HttpRequest) -> Any:
        token = super().__call__(request)
        if token is None:
            tokens.record_call(token=None, endpoint=_endpoint(request), status=401)
        return token

    def authenticate(self, request: HttpRequest, token: str) -> ServiceToken | None:
        return tokens.authenticate(token)


class OrjsonParser(Parser):
    """JSON bodies read with orjson: a batch of 500 receipts parses several times faster."""

    def parse_body(self, request: HttpRequest) -> dict[str, Any]:
        return orjson.loads(request.body)


api = NinjaAPI(
    title="Evidence Workbench",
    version="1",
    description="Signed contract bundles for production, and the decisions production made.",
    urls_namespace="api-v1",
    auth=ServiceTokenAuth(),
    docs_url=None,
    parser=OrjsonParser(),
)


@api.exception_handler(Exception)
def server_error(request: HttpRequest, exc: Exception) -> HttpResponse:
    """A failure is logged and answered in JSON, in development as in production (ninja's
    own answer is a traceback as text when DEBUG is on)."""
    logging.getLogger("django.request").error("Error answering %s", request.path, exc_info=exc)
    return api.create_response(request, {"detail": api_body.SERVER_ERROR}, status=500)


@api.exception_handler(AuthenticationError)
def unauthorized(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    response = api.create_response(request, {"detail": UNAUTHORIZED}, status=401)
    response["WWW-Authenticate"] = 'Bearer realm="api"'
    return response


class Error(Schema):
    detail: str


class TypeEntry(Schema):
    key: str
    title: str
    latest_version: int | None = Field(description="the published version's number")
    sha256: str | None = Field(description="its bundle's sha256, the bundle's ETag")
    bundle_url: str


class ReceiptBatch(Schema):
    receipts: list[dict[str, Any]] = Field(
        description="receipts as `evidence-compiler compile --receipt` writes them (format "
        "evidence-compiler.receipt/2; /1 is read too); the body may be sent gzipped "
        "(Content-Encoding: gzip)"
    )


class ReceiptProblem(Schema):
    loc: list[Any]
    msg: str


class ReceiptOutcome(Schema):
    index: int
    decision_id: str | None
    status: str = Field(description="accepted | duplicate | refused")
    errors: list[ReceiptProblem]


class BatchOutcome(Schema):
    accepted: int
    duplicate: int
    refused: int
    results: list[ReceiptOutcome]


def _endpoint(request: HttpRequest) -> str:
    match = getattr(request, "resolver_match", None)
    route = match.route if match is not None else request.path
    return f"{request.method} /{route}"


def _recorded(view: Callable[..., Any]) -> Callable[..., Any]:
    """Record the call with the status it answered (after the token check passed)."""

    @functools.wraps(view)
    def wrapper(request: ApiRequest, *args: Any, **kwargs: Any) -> Any:
        result = view(request, *args, **kwargs)
        status = getattr(result, "status_code", 200)  # an HttpResponse or a Status
        tokens.record_call(
            token=request.auth,
            endpoint=_endpoint(request),
            decision_type_key=str(kwargs.get("key", "")),
            status=status,
        )
        return result

    return wrapper


def _not_found(message: str) -> Status:
    return Status(404, {"detail": message})


def _forbidden(refusal: tokens.CreatorLost) -> Status:
    return Status(403, {"detail": str(refusal)})


def _etag(sha256: str) -> str:
    return f'"{sha256}"'


def _matches(if_none_match: str, sha256: str) -> bool:
    """RFC 9110 weak comparison: any listed tag (quoted, W/ or not) naming this sha256."""
    for tag in if_none_match.split(","):
        tag = tag.strip()
        if tag == "*":
            return True
        tag = tag.removeprefix("W/").strip('"')
        if tag == sha256:
            return True
    return False


def _signed_file_response(request: HttpRequest, stored: Bundle | BundleTestSuite) -> HttpResponse:
    """A bundle or a test suite, byte for byte, its sha256 the ETag (304 when it matches)."""
    etag = _etag(stored.sha256)
    if _matches(request.headers.get("If-None-Match", ""), stored.sha256):
        response = HttpResponse(status=304)
    else:
        response = HttpResponse(stored.data, content_type="application/json")
        response["Content-Disposition"] = f'inline; filename="{stored.filename}"'
    response["ETag"] = etag
    response["Cache-Control"] = "private, no-cache"
    return response


def _readable_type(request: ApiRequest, key: str) -> DecisionType | Status:
    """The token's decision type `key` if its creator may still read it, else the answer:
    404 outside the token's scope (as for a type that does not exist), 403 saying why."""
    decision_type = tokens.scoped_type(token=request.auth, key=key)
    if decision_type is None:
        return _not_found(NO_SUCH_TYPE.format(key=key))
    if lost := tokens.creator_lost(request.auth, decision_type, tokens.READ):
        return Status(403, {"detail": lost})
    return decision_type


def _published_bundle(request: ApiRequest, key: str, number: int | None = None) -> Bundle | Status:
    """The bundle of version `number` (by default the published one) of a type the token may
    read, else the answer saying why not."""
    decision_type = _readable_type(request, key)
    if isinstance(decision_type, Status):
        return decision_type
    if number is None:
        bundle = tokens.latest_bundle(decision_type)
        missing = NOTHING_PUBLISHED.format(key=key)
    else:
        bundle = tokens.bundle_of_version(decision_type, number)
        missing = NO_SUCH_VERSION.format(key=key, number=number)
    return bundle if bundle is not None else _not_found(missing)


def _suite_response(request: HttpRequest, bundle: Bundle, key: str) -> Any:
    suite = tokens.suite_of(bundle)
    if suite is None:
        return _not_found(NO_TEST_SUITE.format(number=bundle.version.number, key=key))
    return _signed_file_response(request, suite)


@api.get(
    "/types",
    response={200: list[TypeEntry], 403: Error},
    summary="The token's decision types its creator may still read",
)
@_recorded
def types_index(request: ApiRequest) -> Any:
    try:
        readable = tokens.allowed_types(request.auth, tokens.READ)
    except tokens.CreatorLost as exc:
        return _forbidden(exc)
    entries = []
    for decision_type in readable:
        bundle = tokens.latest_bundle(decision_type)
        entries.append(
            {
                "key": decision_type.key,
                "title": decision_type.title,
                "latest_version": bundle.version.number if bundle else None,
                "sha256": bundle.sha256 if bundle else None,
                "bundle_url": request.build_absolute_uri(
                    f"/api/v1/types/{decision_type.key}/bundle"
                ),
            }
        )
    return Status(200, entries)


@api.get(
    "/types/{key}/bundle",
    response={200: dict[str, Any], 304: None, 403: Error, 404: Error},
    summary="The latest published bundle, byte for byte as signed",
)
@_recorded
def latest_bundle(request: ApiRequest, key: str) -> Any:
    bundle = _published_bundle(request, key)
    return bundle if isinstance(bundle, Status) else _signed_file_response(request, bundle)


@api.get(
    "/types/{key}/versions/{number}/bundle",
    response={200: dict[str, Any], 304: None, 403: Error, 404: Error},
    summary="The bundle of one published version",
)
@_recorded
def version_bundle(request: ApiRequest, key: str, number: int) -> Any:
    bundle = _published_bundle(request, key, number)
    return bundle if isinstance(bundle, Status) else _signed_file_response(request, bundle)


@api.get(
    "/types/{key}/tests",
    response={200: dict[str, Any], 304: None, 403: Error, 404: Error},
    summary="The latest bundle's test suite (its scenarios), byte for byte as signed",
)
@_recorded
def latest_tests(request: ApiRequest, key: str) -> Any:
    bundle = _published_bundle(request, key)
    return bundle if isinstance(bundle, Status) else _suite_response(request, bundle, key)


@api.get(
    "/types/{key}/versions/{number}/tests",
    response={200: dict[str, Any], 304: None, 403: Error, 404: Error},
    summary="The test suite of one published version's bundle (pull --with-tests)",
)
@_recorded
def version_tests(request: ApiRequest, key: str, number: int) -> Any:
    bundle = _published_bundle(request, key, number)
    return bundle if isinstance(bundle, Status) else _suite_response(request, bundle, key)


@api.get(
    "/types/{key}/keys",
    response={200: dict[str, Any], 403: Error, 404: Error},
    summary="The key set of the keys that signed the type's bundles (--public-key reads it)",
)
@_recorded
def signer_keys(request: ApiRequest, key: str) -> Any:
    decision_type = _readable_type(request, key)
    if isinstance(decision_type, Status):
        return decision_type
    if not Bundle.objects.filter(decision_type=decision_type).exists():
        return _not_found(NOTHING_PUBLISHED.format(key=key))
    return HttpResponse(tokens.signer_key_set(decision_type), content_type="application/json")


@api.post(
    "/decisions",
    response={200: BatchOutcome, 403: Error, 409: Error, 413: Error},
    summary="Record a batch of decision receipts; each is accepted or refused with reasons",
)
@_recorded
def post_decisions(request: ApiRequest, batch: ReceiptBatch) -> Any:
    if len(batch.receipts) > RECEIPT_BATCH_MAX:
        return Status(413, {"detail": BATCH_TOO_LARGE.format(
            limit=RECEIPT_BATCH_MAX, count=len(batch.receipts))})  # fmt: skip
    try:
        outcomes = receipts.receipts_ingest(
            token=request.auth,
            receipts=batch.receipts,
        )
    except tokens.CreatorLost as exc:
        return _forbidden(exc)
    except IntegrityError:
        return Status(409, {"detail": LOST_RACE})
    counts = dict.fromkeys((receipts.ACCEPTED, receipts.DUPLICATE, receipts.REFUSED), 0)
    for outcome in outcomes:
        counts[outcome.status] += 1
    return Status(200, {**counts, "results": [o.to_json() for o in outcomes]})


# `path("api/v1/", include("workbench.api"))`: the API's URL patterns under its namespace.
# The site's sign-in requirement (LoginRequiredMiddleware) is for people; the token is the
# API's sign-in, so its views are exempt from the session one.
urlpatterns, _ninja_app, app_name = api.urls
for _pattern in urlpatterns:
    if isinstance(_pattern, URLPattern):  # ninja's patterns are all views, no includes
        login_not_required(_pattern.callback)
