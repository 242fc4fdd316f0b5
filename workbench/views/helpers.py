"""What every page area's views share: the page-or-partial choice, a service's errors on a
form, the statuses of the answers that are not 200, the permission checks and the event that
tells the panels the contract changed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.exceptions import ObjectDoesNotExist, PermissionDenied, ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django_htmx.http import trigger_client_event

from contracts import permissions
from workbench.http import HtmxRequest

# Invalid input answers 422 with the errors inline, a stale form 409 with the current state;
# htmx is configured in base.html to swap both.
FORM_INVALID = 422
CONFLICT = 409

# The client event an edit sends; panels listen with hx-trigger="contractChanged from:body".
CHANGED_EVENT = "contractChanged"


def found[**P, T](lookup: Callable[P, T | None], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """What a selector looked up, or 404: selectors say "not there" with the model's
    DoesNotExist (or None) and leave the HTTP answer to the view."""
    try:
        value = lookup(*args, **kwargs)
    except ObjectDoesNotExist as missing:
        raise Http404(str(missing)) from None
    if value is None:
        raise Http404(f"Nothing found by {lookup.__name__}.")
    return value


def page_or_partial(request: HtmxRequest, template: str, partial: str) -> str:
    """One template per page: htmx gets the named partial it swaps, a plain request the page."""
    return f"{template}#{partial}" if request.htmx else template


def form_errors(form: Any, error: ValidationError, fallback: str | None = None) -> None:
    """Put a service's ValidationError on the form: on its field where the form has one, else
    on `fallback` (prefixed with the key it is about) or the form itself."""
    if hasattr(error, "error_dict"):
        for field, errors in error.message_dict.items():
            if field in form.fields:
                form.add_error(field, errors)
            else:
                # Say which key the message is about: the fallback field holds several.
                located = field != "__all__" and fallback is not None
                form.add_error(fallback, [f"{field}: {e}" if located else e for e in errors])
    else:
        form.add_error(None, error.messages)


def error_messages(form: Any) -> list[str]:
    """Every error of a bound form, for a page that lists them in one place."""
    return [e for errors in form.errors.values() for e in errors]


def changed(response: HttpResponse) -> HttpResponse:
    """Tell the page's panels the contract changed (they refresh themselves)."""
    trigger_client_event(response, CHANGED_EVENT)
    return response


def require_edit(request: HtmxRequest, decision_type: Any) -> None:
    """403 unless the signed-in person may edit the decision type (`contracts.permissions`)."""
    permissions.require_edit(request.user, decision_type)


def require_permission(request: HtmxRequest, decision_type: Any, perm: str) -> None:
    """403 unless the person holds `perm` (`roles.EDIT`, `roles.REVIEW`) on the type."""
    if not request.user.has_perm(f"contracts.{perm}", decision_type):
        raise PermissionDenied(permissions.NOT_ALLOWED)


def bad_request(request: HtmxRequest, exception: Exception) -> HttpResponse:
    """handler400: say which parameter was wrong (Django's default page says nothing)."""
    return render(request, "400.html", {"message": str(exception)}, status=400)
