"""A scenario's pages: its form, the packet compiled now with "take as expected", and the
three-way comparison."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from compiler import InvalidInput
from contracts.documents import contract_document
from scenarios import selectors, services
from scenarios.models import Scenario
from workbench.forms import scenarios as forms

from .helpers import form_errors as _form_errors
from .helpers import require_edit as _require_edit
from .not_found import or_404
from .parameters import int_parameter
from .scenario_common import _lock, _template, _warn

# Messages tests assert on.
SCENARIO_SAVED = "Saved scenario '{name}'."
EXPECTATIONS_TAKEN = "The expectations of '{name}' are now those of version {number}."
EXPECTATIONS_MOVED = (
    "The result changed since the page was shown, so nothing was saved. "
    "Here is the current result; take it again if it is still what you expect."
)

DEFAULT_TOP_K = 5


def _propositions(decision_type: Any) -> list[str]:
    """The propositions of the version the editor shows: the slots a scenario can expect."""
    version = or_404(selectors.version_for, decision_type=decision_type, number=None)
    return [p["key"] for p in contract_document(version)["propositions"]]


@require_http_methods(["GET", "POST"])
def scenario_edit(request: HttpRequest, key: str, pk: int | None = None) -> HttpResponse:
    decision_type = selectors.decision_type_for_user(user=request.user, key=key)
    _require_edit(request, decision_type)
    scenario = (
        or_404(selectors.scenario_for_user, user=request.user, key=key, pk=pk)
        if pk is not None
        else None
    )
    propositions = _propositions(decision_type)
    if scenario is not None:
        pinned = forms.ScenarioForm.pinned_propositions(scenario)
        propositions += [k for k in pinned if k not in propositions]
    initial = forms.ScenarioForm.initial_for(scenario) if scenario else {}
    form = forms.ScenarioForm(
        request.POST or None,
        initial=initial,
        decision_type=decision_type,
        propositions=propositions,
    )
    status = 200
    conflict = None
    if request.method == "POST":
        status = 422
        if form.is_valid():
            fields = form.service_fields()
            lock = form.cleaned_data["lock_version"]
            try:
                if scenario is None:
                    scenario = services.scenario_create(
                        actor=request.user,
                        decision_type=decision_type,
                        corpus=form.cleaned_data["corpus"],
                        **fields,
                    )
                else:
                    scenario = services.scenario_update(
                        actor=request.user,
                        scenario=scenario,
                        corpus=form.cleaned_data["corpus"],
                        expected_lock_version=_lock(lock),
                        **fields,
                    )
            except services.EditConflict as exc:
                # Nothing saved; the bound form keeps everything the person typed.
                conflict, status = exc.message, 409
            except ValidationError as exc:
                _form_errors(form, exc)
            else:
                messages.success(request, SCENARIO_SAVED.format(name=scenario.name))
                _warn(request, services.scenario_warnings(scenario))
                return redirect("scenarios:scenario_detail", key=key, pk=scenario.pk)
    context = {
        "decision_type": decision_type,
        "scenario": scenario,
        "form": form,
        "conflict": conflict,
    }
    return render(request, _template(request, "scenario_form", "form"), context, status=status)


def _expectations_token(expectations: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(expectations, sort_keys=True).encode()).hexdigest()


def _scenario_context(request: HttpRequest, scenario: Scenario, number: int | None) -> dict:
    decision_type = scenario.decision_type
    version = or_404(selectors.version_for, decision_type=decision_type, number=number)
    context: dict[str, Any] = {
        "decision_type": decision_type,
        "scenario": scenario,
        "version": version,
        "versions": decision_type.versions.order_by("-number"),
        "can_edit": services.can_edit(request.user, decision_type),
        "can_run": services.can_run(request.user, decision_type),
        "preview": None,
        "invalid": None,
    }
    try:
        preview = selectors.expectation_preview(scenario=scenario, version=version)
    except InvalidInput as exc:
        context["invalid"] = exc.errors
    else:
        context["preview"] = preview
        context["view"] = selectors.PacketView(preview.output.to_json())
        context["token"] = _expectations_token(preview.expectations)
    return context


@require_GET
def scenario_detail(request: HttpRequest, key: str, pk: int) -> HttpResponse:
    scenario = or_404(selectors.scenario_for_user, user=request.user, key=key, pk=pk)
    context = _scenario_context(request, scenario, int_parameter(request.GET, "version"))
    return render(request, _template(request, "scenario", "result"), context)


@require_POST
def scenario_take_expected(request: HttpRequest, key: str, pk: int) -> HttpResponse:
    scenario = or_404(selectors.scenario_for_user, user=request.user, key=key, pk=pk)
    _require_edit(request, scenario.decision_type)
    number = int_parameter(request.POST, "version")
    context = _scenario_context(request, scenario, number)
    preview = context["preview"]
    if preview is None or request.POST.get("token") != context["token"]:
        context["conflict"] = EXPECTATIONS_MOVED
        return render(request, _template(request, "scenario", "result"), context, status=409)
    lock = int_parameter(request.POST, "lock_version")
    try:
        services.scenario_take_expected(
            actor=request.user,
            scenario=scenario,
            expectations=preview.expectations,
            version=preview.version,
            expected_lock_version=_lock(lock),
        )
    except services.EditConflict as exc:
        # The scenario was saved since the page was shown: nothing taken; show it as it is.
        context["conflict"] = exc.message
        return render(request, _template(request, "scenario", "result"), context, status=409)
    taken = EXPECTATIONS_TAKEN.format(name=scenario.name, number=preview.version.number)
    if request.htmx:
        scenario.refresh_from_db()
        context = _scenario_context(request, scenario, number) | {"notice": taken}
        return render(request, "scenarios/scenario.html#result", context)
    messages.success(request, taken)
    url = reverse("scenarios:scenario_detail", kwargs={"key": key, "pk": pk})
    return redirect(f"{url}?version={preview.version.number}")


@require_GET
def scenario_compare(request: HttpRequest, key: str, pk: int) -> HttpResponse:
    scenario = or_404(selectors.scenario_for_user, user=request.user, key=key, pk=pk)
    version = or_404(
        selectors.version_for,
        decision_type=scenario.decision_type,
        number=int_parameter(request.GET, "version"),
    )
    top_k = max(1, min(int_parameter(request.GET, "top_k") or DEFAULT_TOP_K, 100))
    context: dict[str, Any] = {
        "decision_type": scenario.decision_type,
        "scenario": scenario,
        "version": version,
        "versions": scenario.decision_type.versions.order_by("-number"),
        "top_k": top_k,
        "comparison": None,
        "invalid": None,
    }
    try:
        context["comparison"] = selectors.comparison(
            scenario=scenario, version=version, top_k=top_k
        )
    except InvalidInput as exc:
        context["invalid"] = exc.errors
    return render(request, _template(request, "compare", "comparison"), context)
