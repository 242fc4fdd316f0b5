"""Pages and API answers gzipped when the client accepts it (Django's `GZipMiddleware`),
except an answer that carries a one-time secret.

BREACH recovers a secret from the compressed size of answers that carry it next to text the
attacker chooses, over many requests. What the workbench's pages carry is safe to compress:
the CSRF token in every form is masked anew for each answer (Django), the session and API
tokens travel in headers (never compressed), and since Django 4.2 `GZipMiddleware` pads each
answer with a random number of bytes (up to 100, in the gzip header's file name field), so
equal content no longer means equal size. The one body that holds a secret is the answer
that shows a new service token once; such answers are marked `Cache-Control: no-store`,
and this middleware leaves every `no-store` answer uncompressed.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponseBase
from django.middleware.gzip import GZipMiddleware


def carries_secret(response: HttpResponseBase) -> bool:
    """An answer marked `no-store`: the token page that shows a new secret (and any other
    answer whose content must not outlive it)."""
    directives = response.get("Cache-Control", "").split(",")
    return any(directive.strip().lower() == "no-store" for directive in directives)


class CompressionMiddleware(GZipMiddleware):
    def process_response(
        self, request: HttpRequest, response: HttpResponseBase
    ) -> HttpResponseBase:
        if carries_secret(response):
            return response
        return super().process_response(request, response)
