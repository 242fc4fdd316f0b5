"""The request types the views are written against.

Django hands every view an `HttpRequest`; the middleware and the API framework add attributes
its type does not know about. These subclasses name them, for the type checker only: nothing
constructs them.
"""

from __future__ import annotations

from django.contrib.auth.models import User
from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails

from publishing.models import ServiceToken


class HtmxRequest(HttpRequest):
    """A request that went through django-htmx's middleware (settings.MIDDLEWARE), which sets
    `htmx`: falsy for a plain request, the htmx headers' details for an htmx one."""

    htmx: HtmxDetails
    # LoginRequiredMiddleware (settings.MIDDLEWARE) lets no anonymous request reach a view
    # written against this type; the project keeps Django's own user model.
    user: User


class ApiRequest(HttpRequest):
    """A request to the machine API (`workbench.api`) past its token check: django-ninja sets
    `auth` to what the authenticator returned, the service token."""

    auth: ServiceToken
