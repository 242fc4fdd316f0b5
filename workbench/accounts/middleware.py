"""Sessions end after `SESSION_COOKIE_AGE` seconds without a request, and one opened through
the identity provider after `SSO_SESSION_MAX_SECONDS` however busy: the next sign-in goes
through the provider again, which applies the person's current groups (or refuses them)."""

from __future__ import annotations

import time
from collections.abc import Callable

from django.conf import settings
from django.contrib.auth import logout
from django.http import HttpRequest, HttpResponse

# How often (seconds) a request pushes the session's expiry on: saving it at every request
# would write the session row on every htmx poll; this writes it at most once a minute, so a
# session ends between the idle time and a minute more after the last request.
RENEW_EVERY_SECONDS = 60
# Set in the session by a sign-in through the provider (workbench.accounts.views).
SIGNED_IN_THROUGH_PROVIDER_AT = "provider_sign_in_at"


class IdleSessionMiddleware:
    """Renews a signed-in session's expiry as it is used, so the session (and its cookie)
    lasts `SESSION_COOKIE_AGE` from the last request rather than from sign-in."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        session = getattr(request, "session", None)
        if session is not None and session.session_key is not None:
            started = session.get(SIGNED_IN_THROUGH_PROVIDER_AT)
            if started is not None and time.time() - started > settings.SSO_SESSION_MAX_SECONDS:
                # Before the view: the sign-in requirement then sends the person to sign in.
                logout(request)
        response = self.get_response(request)
        session = getattr(request, "session", None)
        user = getattr(request, "user", None)
        # Only a session that exists and is signed in (a probe or an anonymous page never
        # looks a user up for this).
        if session is None or session.session_key is None or user is None:
            return response
        if user.is_authenticated:
            now = int(time.time())
            if now - int(session.get("seen_at", 0)) >= RENEW_EVERY_SECONDS:
                session["seen_at"] = now  # marks the session modified: saved, cookie renewed
        return response
