"""The editor's page, its lint, preview and history panels, the contract as the compiler
receives it, and the version's settings."""

from __future__ import annotations

from django.http import HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET, require_POST

from contracts import selectors, services
from contracts.models import ContractVersion
from workbench import forms
from workbench.http import HtmxRequest
from workbench.views.helpers import FORM_INVALID, found, require_edit

from .fragments import EDITOR_TEMPLATE, SETTINGS, edit, render_version


@require_GET
def decision_type_detail(request: HtmxRequest, key: str) -> HttpResponse:
    decision_type = found(selectors.decision_type_for_user, user=request.user, key=key)
    version = selectors.current_version(decision_type=decision_type)
    if version is None:
        return render(request, EDITOR_TEMPLATE, {"decision_type": decision_type, "version": None})
    return render_version(request, version)


@require_GET
def version_detail(request: HtmxRequest, key: str, number: int) -> HttpResponse:
    version = found(selectors.version_for_user, user=request.user, key=key, number=number)
    return render_version(request, version)


@require_GET
def version_panel(request: HtmxRequest, key: str, number: int, panel: str) -> HttpResponse:
    """The lint, preview or history panel (`panel`, set by the URL), or the page around it."""
    version = found(selectors.version_for_user, user=request.user, key=key, number=number)
    return render_version(request, version, panel)


@require_GET
def version_contract_json(request: HtmxRequest, key: str, number: int) -> HttpResponse:
    """Exactly what the compiler receives, or 422 with every reason it would refuse it."""
    version = found(selectors.version_for_user, user=request.user, key=key, number=number)
    preview = selectors.version_preview(version=version)
    if not preview.valid:
        problems = [{"loc": list(p.loc), "msg": p.msg} for p in preview.problems]
        return JsonResponse({"result": "invalid", "errors": problems}, status=FORM_INVALID)
    return JsonResponse(preview.compiler_document, json_dumps_params={"indent": 2})


@require_POST
def version_settings(request: HtmxRequest, key: str, number: int) -> HttpResponse:
    version = found(selectors.version_for_user, user=request.user, key=key, number=number)
    require_edit(request, version.decision_type)
    return edit(
        request,
        version,
        forms.SettingsForm(request.POST),
        lambda data: services.version_update_settings(
            actor=request.user,
            version=version,
            expected_lock_version=data["lock_version"],
            **{field: data[field] for field in ContractVersion.SETTINGS_FIELDS},
        ),
        fragment=SETTINGS,
        on_invalid=lambda form: {"settings_form": form},
    )
