"""The dashboard (the decision types I may see, what waits for my review) and creating a
decision type."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from contracts import selectors, services
from workbench import forms
from workbench.http import HtmxRequest

from .helpers import FORM_INVALID, form_errors

# Messages tests assert on.
DECISION_TYPE_CREATED = "Created '{key}' with an empty draft, version 1."


@require_GET
def dashboard(request: HtmxRequest) -> HttpResponse:
    return render(
        request,
        "workbench/dashboard.html",
        {
            "rows": selectors.dashboard_rows(user=request.user),
            "waiting": selectors.waiting_for_review(user=request.user),
            "can_create": request.user.has_perm("contracts.add_decisiontype"),
        },
    )


@require_http_methods(["GET", "POST"])
def decision_type_create(request: HtmxRequest) -> HttpResponse:
    if not request.user.has_perm("contracts.add_decisiontype"):
        raise PermissionDenied(services.NOT_ALLOWED)
    form = forms.DecisionTypeForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            decision_type = services.decision_type_create(actor=request.user, **form.cleaned_data)
        except ValidationError as error:
            form_errors(form, error)
        else:
            messages.success(request, DECISION_TYPE_CREATED.format(key=decision_type.key))
            return redirect("decision_type_detail", key=decision_type.key)
    status = FORM_INVALID if form.is_bound else 200
    return render(request, "workbench/decision_type_form.html", {"form": form}, status=status)
