"""The editor's People card: who holds which role on a decision type, granting and revoking."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django import forms as django_forms
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from contracts import selectors, services
from contracts.models import DecisionType
from workbench import forms
from workbench.http import HtmxRequest
from workbench.views.helpers import (
    FORM_INVALID,
    changed,
    error_messages,
    form_errors,
    found,
    require_edit,
)

from .fragments import render_version

# Messages tests assert on.
NO_SUCH_PERSON = "There is nobody with this username."


def _access_change(
    request: HtmxRequest,
    key: str,
    form: django_forms.Form,
    change: Callable[[DecisionType, Any, dict[str, Any]], object],
) -> HttpResponse:
    """Grant or revoke a role, then answer with the people card (htmx) or the page."""
    decision_type = found(selectors.decision_type_for_user, user=request.user, key=key)
    require_edit(request, decision_type)
    # The people card is part of the editor, which shows a version.
    version = found(selectors.current_version, decision_type=decision_type)
    if form.is_valid():
        person = selectors.person(username=form.cleaned_data["username"])
        if person is None:
            form.add_error("username", NO_SUCH_PERSON)
        else:
            try:
                change(decision_type, person, form.cleaned_data)
            except ValidationError as error:
                form_errors(form, error)
            else:
                if not request.htmx:
                    url = reverse("decision_type_detail", kwargs={"key": key})
                    return redirect(url + "#people")
                return changed(render_version(request, version, "people"))
    return render_version(
        request,
        version,
        "people",
        status=FORM_INVALID,
        access_form=form if isinstance(form, forms.AccessForm) else None,
        people_errors=error_messages(form),
    )


@require_POST
def decision_type_access(request: HtmxRequest, key: str) -> HttpResponse:
    return _access_change(
        request,
        key,
        forms.AccessForm(request.POST),
        lambda decision_type, person, data: services.access_grant(
            actor=request.user, decision_type=decision_type, user=person, role=data["role"]
        ),
    )


@require_POST
def decision_type_access_revoke(request: HtmxRequest, key: str) -> HttpResponse:
    return _access_change(
        request,
        key,
        forms.RevokeForm(request.POST),
        lambda decision_type, person, data: services.access_revoke(
            actor=request.user, decision_type=decision_type, user=person
        ),
    )
