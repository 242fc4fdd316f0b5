"""Site-wide sign-in, aware of htmx; a form posted larger than Django reads."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import middleware
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, QueryDict
from django.http.response import HttpResponseRedirectBase
from django.shortcuts import resolve_url
from django.template.defaultfilters import filesizeformat
from django.utils.datastructures import MultiValueDict
from django.utils.deprecation import MiddlewareMixin
from django_htmx.http import HttpResponseClientRedirect

POST_TOO_LARGE = (
    "Nothing was saved: this form sent {size}, and a form's fields may hold at most {limit}. "
    "Upload a large corpus as a file instead (at most {upload})."
)


class LoginRequiredMiddleware(middleware.LoginRequiredMiddleware):
    """Django's LoginRequiredMiddleware, except that a fragment requested by htmx after the
    session ended sends the whole page to the sign-in form (instead of swapping the form
    into a panel), and back to that page afterwards."""

    # The htmx answer is a client-side redirect (200 with HX-Redirect), not an HTTP one.
    def handle_no_permission(  # type: ignore[override]
        self, request: HttpRequest, view_func: Callable[..., HttpResponse]
    ) -> HttpResponseRedirectBase:
        htmx = getattr(request, "htmx", None)
        if not htmx:
            return super().handle_no_permission(request, view_func)
        login_url = resolve_url(self.get_login_url(view_func))
        next_url = htmx.current_url_abs_path or "/"
        return HttpResponseClientRedirect(f"{login_url}?{urlencode({'next': next_url})}")


class RequestTooLargeMiddleware(MiddlewareMixin):
    """A form whose fields are larger than `DATA_UPLOAD_MAX_MEMORY_SIZE` (a pasted JSON
    document, say) gets its page back with a 413 and a message naming the limit, instead of
    Django's `RequestDataTooBig` (a debug page, or a bare 400 in production).

    What was posted cannot be read, so the page is the view's own answer to a GET: nothing is
    written, and the CSRF check (which would fail reading the same fields) is not needed."""

    def process_view(
        self,
        request: HttpRequest,
        view_func: Callable[..., HttpResponse],
        view_args: tuple[Any, ...],
        view_kwargs: dict[str, Any],
    ) -> HttpResponse | None:
        if request.method != "POST":
            return None
        try:
            request.POST  # noqa: B018 - read here, where its refusal can be answered
        except RequestDataTooBig:
            pass
        else:
            return None
        request._post, request._files = QueryDict(), MultiValueDict()  # type: ignore[attr-defined]
        message = POST_TOO_LARGE.format(
            size=filesizeformat(int(request.META.get("CONTENT_LENGTH") or 0)),
            limit=filesizeformat(settings.DATA_UPLOAD_MAX_MEMORY_SIZE),
            upload=filesizeformat(settings.CORPUS_UPLOAD_MAX_BYTES),
        )
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            return HttpResponse(message, status=413, content_type="text/plain; charset=utf-8")
        messages.error(request, message)
        request.method = "GET"
        response = view_func(request, *view_args, **view_kwargs)
        if response.status_code != 200:  # no page to show: the message waits for the next
            return HttpResponse(message, status=413, content_type="text/plain; charset=utf-8")
        response.status_code = 413
        return response
