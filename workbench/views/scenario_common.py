"""What the scenario pages (corpora, scenarios, runs) share: the page-or-partial template,
a service's errors on a form, warnings as messages, the permission check and the lock value
an edit form posted."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest

from scenarios import services

WARNING = "Warning: {warning}"

# What an edit without its form's lock value is compared as: never current, so a post that
# does not say which revision it was based on is refused (409) rather than saved blindly.
NO_LOCK = -1


def _template(request: HttpRequest, page: str, partial: str) -> str:
    return f"scenarios/{page}.html#{partial}" if request.htmx else f"scenarios/{page}.html"


def _form_errors(form: Any, error: ValidationError, fallback: str | None = None) -> None:
    """Put a service's errors on the form's fields; others on `fallback` (or the form)."""
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


def _warn(request: HttpRequest, warnings: list[Any]) -> None:
    """Saved, but with values the catalogue or the contract does not know: say where."""
    for warning in warnings:
        messages.warning(request, WARNING.format(warning=warning))


def _require_edit(request: HttpRequest, decision_type: Any) -> None:
    if not services.can_edit(request.user, decision_type):
        raise PermissionDenied(services.NOT_ALLOWED)


def _lock(value: int | None) -> int:
    """The lock value an edit form posted; a post without one is never current."""
    return NO_LOCK if value is None else value

