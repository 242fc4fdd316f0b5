"""The machine API's request bodies: gzip accepted, sizes bounded, every refusal in JSON.

A service posting a batch of receipts may send it gzipped (`Content-Encoding: gzip`). The
body is inflated here, before any view reads it, and never past `API_BODY_MAX_BYTES` (by
default `DATA_UPLOAD_MAX_MEMORY_SIZE`): a small body that inflates past the limit (a gzip
bomb) is refused as soon as the limit is crossed, never expanded whole. The compressed body is
bounded by the same limit. A body over the limit, damaged gzip data or another encoding gets
a JSON answer naming the problem (and the limit), in development as in production; a page of
HTML is for people, not for the services that call `/api/`.
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse

API_PREFIX = "/api/"

# Messages tests assert on.
BODY_TOO_LARGE = (
    "The request body is larger than {limit:,} bytes, the API's limit; send fewer receipts "
    "per batch, or gzip it."
)
INFLATED_TOO_LARGE = (
    "The gzipped request body inflates past {limit:,} bytes, the API's limit; send fewer "
    "receipts per batch."
)
NOT_GZIP = "The request body is not valid gzip data ({reason}); send it gzipped whole, or plain."
ENCODING_UNSUPPORTED = (
    "Content-Encoding '{encoding}' is not accepted; send the body plain or with "
    "Content-Encoding: gzip."
)
SERVER_ERROR = "The workbench failed to answer this call; it has been logged. Try again later."

# Inflated in pieces this large, so a bomb costs at most one piece past the limit.
_PIECE = 64 * 1024


def body_limit() -> int:
    return int(getattr(settings, "API_BODY_MAX_BYTES", settings.DATA_UPLOAD_MAX_MEMORY_SIZE))


def gunzip_bounded(data: bytes, limit: int) -> bytes:
    """`data` inflated, or ValueError naming why not; `RequestDataTooBig` once the inflated
    text passes `limit` bytes (nothing past the limit is kept). Concatenated members are read
    as one body, as gzip does."""
    out = bytearray()
    pending = data
    while pending:
        inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        try:
            chunk = inflater.decompress(pending, _PIECE)
            while True:
                out += chunk
                if len(out) > limit:
                    raise RequestDataTooBig(INFLATED_TOO_LARGE.format(limit=limit))
                if inflater.eof or not inflater.unconsumed_tail and not chunk:
                    break
                chunk = inflater.decompress(inflater.unconsumed_tail, _PIECE)
        except zlib.error as exc:
            raise ValueError(str(exc)) from None
        if not inflater.eof:
            raise ValueError("the data ends before the gzip stream does")
        pending = inflater.unused_data
    return bytes(out)


def _refusal(message: str, status: int) -> JsonResponse:
    return JsonResponse({"detail": message}, status=status)


class ApiBodyMiddleware:
    """Reads (and inflates) the body of every call under `/api/` that sends one, and answers
    JSON for what cannot be read and for an error nothing else answered."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.path.startswith(API_PREFIX):
            return self.get_response(request)
        refusal = self._read_body(request)
        if refusal is not None:
            return refusal
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not request.path.startswith(API_PREFIX):
            return None
        if isinstance(exception, RequestDataTooBig):
            return _refusal(BODY_TOO_LARGE.format(limit=body_limit()), 413)
        logging.getLogger("django.request").error(
            "Error answering %s", request.path, exc_info=exception
        )
        return _refusal(SERVER_ERROR, 500)

    def _read_body(self, request: HttpRequest) -> HttpResponse | None:
        if request.method not in ("POST", "PUT", "PATCH"):
            return None
        limit = body_limit()
        encoding = request.headers.get("Content-Encoding", "").strip().lower()
        if encoding not in ("", "identity", "gzip"):
            return _refusal(ENCODING_UNSUPPORTED.format(encoding=encoding), 415)
        try:
            declared = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            declared = 0
        if declared > limit:
            return _refusal(BODY_TOO_LARGE.format(limit=limit), 413)
        # The declared length was checked against the API's own limit, so Django's (meant
        # for forms) does not apply to the read.
        raw = request.read(limit + 1)
        if len(raw) > limit:
            return _refusal(BODY_TOO_LARGE.format(limit=limit), 413)
        if encoding == "gzip":
            try:
                raw = gunzip_bounded(raw, limit)
            except RequestDataTooBig:
                return _refusal(INFLATED_TOO_LARGE.format(limit=limit), 413)
            except ValueError as exc:
                return _refusal(NOT_GZIP.format(reason=exc), 400)
            del request.META["HTTP_CONTENT_ENCODING"]
            request.META["CONTENT_LENGTH"] = str(len(raw))
        request._body = raw  # what `request.body` answers
        return None
