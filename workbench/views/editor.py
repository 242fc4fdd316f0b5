"""The contract editor: a decision type's current version, its propositions and settings,
the lint, preview and history panels, and the people who hold a role on the type.

The editor is one template, `contracts/decision_type.html`, whose fragments are named
partials: an htmx request gets only the fragment it swaps, a plain request the whole page, so
every page works without JavaScript. Permission is checked here and in the selectors, never
only in a template: a client can ask for any fragment directly.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from contracts import selectors, services
from contracts.models import ContractVersion, DecisionType, Proposition, SourceClass
from workbench import forms

from .helpers import (
    CONFLICT,
    FORM_INVALID,
    changed,
    error_messages,
    form_errors,
    page_or_partial,
    require_edit,
)

EDITOR_TEMPLATE = "contracts/decision_type.html"

# Messages tests assert on.


# --------------------------------------------------------------------------- helpers


def _class_choices(
    catalogue: Iterable[SourceClass], exclude: list[str] | tuple[str, ...] = ()
) -> list[tuple[str, str]]:
    """The classes a proposition may still accept, from a catalogue the caller read once."""
    return [
        (c.key, f"{c.key} — {c.label}" + (" (weak)" if c.weak else ""))
        for c in catalogue
        if not c.retired and c.key not in exclude
    ]


@dataclass(frozen=True)
class AcceptedClass:
    key: str
    source_class: SourceClass | None  # None: not in the catalogue


@dataclass
class PropositionRow:
    proposition: Proposition
    classes: list[AcceptedClass]
    accept_form: forms.AcceptedClassForm
    edit_form: forms.PropositionForm | None = None


HISTORY_PAGE_SIZE = 20


def _panels_context(version: ContractVersion, history_page: str | None = None) -> dict[str, Any]:
    """What the lint, preview and history panels show (the history a page at a time)."""
    preview = selectors.version_preview(version=version)
    history = Paginator(
        selectors.history(decision_type=version.decision_type, limit=None), HISTORY_PAGE_SIZE
    ).get_page(history_page)
    return {
        "decision_type": version.decision_type,
        "version": version,
        "findings": selectors.version_lint(version=version),
        "preview": preview,
        "preview_json": json.dumps(
            preview.compiler_document if preview.valid else preview.document, indent=2
        ),
        "history": history,
    }


def _editor_context(
    request: HttpRequest,
    version: ContractVersion,
    *,
    editing: tuple[int, forms.PropositionForm] | None = None,
    accept_form: tuple[int, forms.AcceptedClassForm] | None = None,
    add_form: forms.PropositionAddForm | None = None,
    settings_form: forms.SettingsForm | None = None,
    errors: list[str] | None = None,
    conflict: str | None = None,
) -> dict[str, Any]:
    """What the contract editor shows, its forms rendered with the current lock version."""
    decision_type = version.decision_type
    editable = selectors.version_editable(user=request.user, version=version)
    lock = {"lock_version": version.lock_version}
    # Read once for every row: the editor's queries must not grow with the propositions.
    catalogue = selectors.source_class_catalogue()
    rows = []
    for proposition in version.propositions.all():
        row = PropositionRow(
            proposition=proposition,
            classes=[AcceptedClass(k, catalogue.get(k)) for k in proposition.accepted_classes],
            accept_form=forms.AcceptedClassForm(
                initial=lock,
                class_choices=_class_choices(catalogue.values(), proposition.accepted_classes),
            ),
        )
        if accept_form and accept_form[0] == proposition.pk:
            row.accept_form = accept_form[1]
        if editable and editing and editing[0] == proposition.pk:
            row.edit_form = editing[1]
        rows.append(row)
    return {
        "decision_type": decision_type,
        "version": version,
        "versions": decision_type.versions.order_by("-number"),
        "editable": editable,
        # Why the editor is read-only, for the template to say (it compares no statuses).
        "editable_status": version.is_editable,
        "reopen_from_review": version.needs_reopening,
        "lock_version": version.lock_version,
        "rows": rows,
        "add_form": add_form
        or forms.PropositionAddForm(initial=lock, class_choices=_class_choices(catalogue.values())),
        "settings_form": settings_form or forms.SettingsForm.for_version(version),
        "errors": errors or [],
        "conflict": conflict,
        "can_start_draft": selectors.can_start_draft(user=request.user, version=version),
    }


def _people_context(
    request: HttpRequest,
    decision_type: DecisionType,
    access_form: forms.AccessForm | None = None,
    people_errors: list[str] | None = None,
) -> dict[str, Any]:
    """Who holds which role on the type; owners also get the forms to change that."""
    return {
        "decision_type": decision_type,
        "people": selectors.people(decision_type=decision_type),
        "can_manage": selectors.can_edit(user=request.user, decision_type=decision_type),
        "access_form": access_form or forms.AccessForm(),
        "people_errors": people_errors or [],
    }


PANELS = {"lint", "preview", "history"}


def _render_version(
    request: HttpRequest,
    version: ContractVersion,
    partial: str = "editor",
    *,
    status: int = 200,
    access_form: forms.AccessForm | None = None,
    people_errors: list[str] | None = None,
    **editor: Any,
) -> HttpResponse:
    """The whole page, or for htmx only the named partial, built from fresh rows."""
    version.refresh_from_db()
    history_page = request.GET.get("history_page")
    if request.htmx and partial in PANELS:
        context = _panels_context(version, history_page)
    elif request.htmx and partial == "people":
        context = _people_context(request, version.decision_type, access_form, people_errors)
    elif request.htmx:
        context = _editor_context(request, version, **editor)
    else:
        context = {
            **_panels_context(version, history_page),
            **_people_context(request, version.decision_type, access_form, people_errors),
            **_editor_context(request, version, **editor),
        }
    template = page_or_partial(request, EDITOR_TEMPLATE, partial)
    return render(request, template, context, status=status)


def _version_url(version: ContractVersion) -> str:
    return reverse(
        "version_detail",
        kwargs={"key": version.decision_type.key, "number": version.number},
    )


def _edit(
    request: HttpRequest,
    version: ContractVersion,
    form: forms.forms.Form,
    change: Callable[[dict[str, Any]], object],
    *,
    on_invalid: Callable[[forms.forms.Form], dict[str, Any]] | None = None,
) -> HttpResponse:
    """Validate `form`, apply `change` through a service and answer.

    Success: the fresh editor (htmx, with the event that refreshes the lint, preview and
    history panels) or a redirect to the page. Invalid input: 422 with the errors inline.
    A stale lock version: 409 with the current state and nothing saved.
    """
    if form.is_valid():
        try:
            change(form.cleaned_data)
        except services.EditConflict as conflict:
            return changed(
                _render_version(request, version, status=CONFLICT, conflict=conflict.message)
            )
        except ValidationError as error:
            form_errors(form, error)
        else:
            if not request.htmx:
                return redirect(_version_url(version) + "#editor")
            return changed(_render_version(request, version))
    context = on_invalid(form) if on_invalid else {"errors": error_messages(form)}
    return _render_version(request, version, status=FORM_INVALID, **context)


@require_GET
def decision_type_detail(request: HttpRequest, key: str) -> HttpResponse:
    decision_type = selectors.decision_type_for_user(user=request.user, key=key)
    version = selectors.current_version(decision_type=decision_type)
    if version is None:
        return render(request, EDITOR_TEMPLATE, {"decision_type": decision_type, "version": None})
    return _render_version(request, version)


@require_GET
def version_detail(request: HttpRequest, key: str, number: int) -> HttpResponse:
    version = selectors.version_for_user(user=request.user, key=key, number=number)
    return _render_version(request, version)


@require_GET
def version_lint(request: HttpRequest, key: str, number: int) -> HttpResponse:
    version = selectors.version_for_user(user=request.user, key=key, number=number)
    return _render_version(request, version, "lint")


@require_GET
def version_preview(request: HttpRequest, key: str, number: int) -> HttpResponse:
    version = selectors.version_for_user(user=request.user, key=key, number=number)
    return _render_version(request, version, "preview")


@require_GET
def version_history(request: HttpRequest, key: str, number: int) -> HttpResponse:
    version = selectors.version_for_user(user=request.user, key=key, number=number)
    return _render_version(request, version, "history")


@require_GET
def version_contract_json(request: HttpRequest, key: str, number: int) -> HttpResponse:
    """Exactly what the compiler receives, or 422 with every reason it would refuse it."""
    version = selectors.version_for_user(user=request.user, key=key, number=number)
    preview = selectors.version_preview(version=version)
    if not preview.valid:
        problems = [{"loc": list(p.loc), "msg": p.msg} for p in preview.problems]
        return JsonResponse({"result": "invalid", "errors": problems}, status=FORM_INVALID)
    return JsonResponse(preview.compiler_document, json_dumps_params={"indent": 2})


@require_POST
def version_settings(request: HttpRequest, key: str, number: int) -> HttpResponse:
    version = selectors.version_for_user(user=request.user, key=key, number=number)
    require_edit(request, version.decision_type)
    form = forms.SettingsForm(request.POST)
    return _edit(
        request,
        version,
        form,
        lambda data: services.version_update_settings(
            actor=request.user,
            version=version,
            expected_lock_version=data["lock_version"],
            **{field: data[field] for field in ContractVersion.SETTINGS_FIELDS},
        ),
        on_invalid=lambda form: {"settings_form": form},
    )
