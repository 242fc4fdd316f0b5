"""What the editor's views share: the context of each fragment, rendering the page or one
fragment of it, and `edit`, the one way a view applies a change and answers.

The editor is one template, `contracts/decision_type.html`, whose fragments are named
partials: an htmx request gets only the fragment it swaps, a plain request the whole page.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django import forms as django_forms
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse

from contracts import selectors, services
from contracts.models import ContractVersion, DecisionType, Proposition, SourceClass
from workbench import forms
from workbench.http import HtmxRequest
from workbench.views.helpers import (
    CONFLICT,
    FORM_INVALID,
    changed,
    error_messages,
    form_errors,
    page_or_partial,
)
from workbench.views.paging import paged

EDITOR_TEMPLATE = "contracts/decision_type.html"

# The panels that refresh themselves on the contractChanged event an edit sends.
PANELS = frozenset({"lint", "preview", "history"})


def class_choices(
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


def _panels_context(request: HtmxRequest, version: ContractVersion) -> dict[str, Any]:
    """What the lint, preview and history panels show (the history a page at a time, its
    links to the editor's page, whichever URL the panel came from)."""
    preview = selectors.version_preview(version=version)
    history = paged(
        request,
        selectors.history(decision_type=version.decision_type, limit=None),
        parameter="history_page",
        per_page=HISTORY_PAGE_SIZE,
        path=reverse("version_detail", args=[version.decision_type.key, version.number]),
    )
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
    request: HtmxRequest,
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
                class_choices=class_choices(catalogue.values(), proposition.accepted_classes),
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
        or forms.PropositionAddForm(initial=lock, class_choices=class_choices(catalogue.values())),
        "settings_form": settings_form or forms.SettingsForm.for_version(version),
        "errors": errors or [],
        "conflict": conflict,
        # Only a read-only editor offers a new draft: an editable one asks nothing more.
        "can_start_draft": not editable
        and selectors.can_start_draft(user=request.user, version=version),
    }


def _people_context(
    request: HtmxRequest,
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


def render_version(
    request: HtmxRequest,
    version: ContractVersion,
    fragment: str = "editor",
    *,
    status: int = 200,
    access_form: forms.AccessForm | None = None,
    people_errors: list[str] | None = None,
    **editor: Any,
) -> HttpResponse:
    """The whole page, or for htmx only the named fragment, built from fresh rows: only that
    fragment's context is computed."""
    # Fresh after a change, with its decision type in the same query.
    version.refresh_from_db(from_queryset=ContractVersion.objects.select_related("decision_type"))
    if request.htmx and fragment in PANELS:
        context = _panels_context(request, version)
    elif request.htmx and fragment == "people":
        context = _people_context(request, version.decision_type, access_form, people_errors)
    elif request.htmx:
        context = _editor_context(request, version, **editor)
    else:
        context = {
            **_panels_context(request, version),
            **_people_context(request, version.decision_type, access_form, people_errors),
            **_editor_context(request, version, **editor),
        }
    template = page_or_partial(request, EDITOR_TEMPLATE, fragment)
    return render(request, template, context, status=status)


def _version_url(version: ContractVersion) -> str:
    return reverse(
        "version_detail",
        kwargs={"key": version.decision_type.key, "number": version.number},
    )


def edit(
    request: HtmxRequest,
    version: ContractVersion,
    form: django_forms.Form,
    change: Callable[[dict[str, Any]], object],
    *,
    on_invalid: Callable[[django_forms.Form], dict[str, Any]] | None = None,
) -> HttpResponse:
    """Validate `form`, apply `change` through a service and answer.

    Success: for htmx the editor fragment alone, with the contractChanged event on which the
    lint, preview and history panels refresh themselves; without htmx a redirect to the page.
    The editor is the smallest fragment an edit can answer with: every form in it carries the
    version's lock version, which each edit moves on. Invalid input: 422 with the errors
    inline. A stale lock version: 409 with the current state and nothing saved.
    """
    if form.is_valid():
        try:
            change(form.cleaned_data)
        except services.EditConflict as conflict:
            return changed(
                render_version(request, version, status=CONFLICT, conflict=conflict.message)
            )
        except ValidationError as error:
            form_errors(form, error)
        else:
            if not request.htmx:
                return redirect(_version_url(version) + "#editor")
            return changed(render_version(request, version))
    context = on_invalid(form) if on_invalid else {"errors": error_messages(form)}
    return render_version(request, version, status=FORM_INVALID, **context)
