"""Site-wide sign-in, aware of htmx."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib.auth import middleware
from django.http import HttpRequest, HttpResponse
from django.shortcuts import resolve_url
from django_htmx.http import HttpResponseClientRedirect


class LoginRequiredMiddleware(middleware.LoginRequiredMiddleware):
    """Django's LoginRequiredMiddleware, except that a fragment requested by htmx after the
    session ended sends the whole page to the sign-in form (instead of swapping the form
    into a panel), and back to that page afterwards."""

    def handle_no_permission(self, request: HttpRequest, view_func) -> HttpResponse:
        htmx = getattr(request, "htmx", None)
        if not htmx:
            return super().handle_no_permission(request, view_func)
        login_url = resolve_url(self.get_login_url(view_func))
        next_url = htmx.current_url_abs_path or "/"
        return HttpResponseClientRedirect(f"{login_url}?{urlencode({'next': next_url})}")
