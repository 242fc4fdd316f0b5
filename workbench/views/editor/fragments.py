"""What the editor's views share: the context of each fragment, rendering the page or one
fragment of it, and `edit`, the one way a view applies a change and answers.

The editor is one template, `contracts/decision_type.html`, whose fragments are named
partials: an htmx request gets only the fragment it swaps, a plain request the whole page.
An edit answers with the fragment it changed: one proposition's row, the propositions table
(adding, deleting or moving one renumbers the rest), or the settings form; the `lock`
partial, swapped out of band, carries the new lock version into every other form.
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
from django.template.loader import render_to_string
from django.urls import reverse
from django_htmx.http import reswap, retarget

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
# The fragments of the editor an edit answers with (named partials of EDITOR_TEMPLATE).
EDITOR = "editor"
PROPOSITIONS = "propositions"
ROW = "row"
SETTINGS = "settings"


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
    position: int  # from 1, as the table numbers it
    last: bool
    edit_form: forms.PropositionForm | None = None

    @property
    def first(self) -> bool:
        return self.position == 1


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
    # Read once for every row: the editor's queries must not grow with the propositions.
    catalogue = selectors.source_class_catalogue()
    propositions = list(version.propositions.all())
    rows = [
        _row(version, p, n, n == len(propositions), catalogue, editable, editing, accept_form)
        for n, p in enumerate(propositions, start=1)
    ]
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
        or forms.PropositionAddForm(
            initial={"lock_version": version.lock_version},
            class_choices=class_choices(catalogue.values()),
        ),
        "settings_form": settings_form or forms.SettingsForm.for_version(version),
        "errors": errors or [],
        "conflict": conflict,
        # Only a read-only editor offers a new draft: an editable one asks nothing more.
        "can_start_draft": not editable
        and selectors.can_start_draft(user=request.user, version=version),
    }


def _row(
    version: ContractVersion,
    proposition: Proposition,
    position: int,
    last: bool,
    catalogue: dict[str, SourceClass],
    editable: bool,
    editing: tuple[int, forms.PropositionForm] | None,
    accept_form: tuple[int, forms.AcceptedClassForm] | None,
) -> PropositionRow:
    row = PropositionRow(
        proposition=proposition,
        classes=[AcceptedClass(k, catalogue.get(k)) for k in proposition.accepted_classes],
        accept_form=forms.AcceptedClassForm(
            initial={"lock_version": version.lock_version},
            class_choices=class_choices(catalogue.values(), proposition.accepted_classes),
        ),
        position=position,
        last=last,
    )
    if accept_form and accept_form[0] == proposition.pk:
        row.accept_form = accept_form[1]
    if editable and editing and editing[0] == proposition.pk:
        row.edit_form = editing[1]
    return row


def _row_context(
    request: HtmxRequest,
    version: ContractVersion,
    proposition: Proposition,
    *,
    editing: tuple[int, forms.PropositionForm] | None = None,
    accept_form: tuple[int, forms.AcceptedClassForm] | None = None,
) -> dict[str, Any]:
    """What one proposition's row shows: the row alone, its place among the others (read in
    the same query as the row itself, fresh after the change)."""
    order = list(version.propositions.all())
    position = next(n for n, p in enumerate(order, start=1) if p.pk == proposition.pk)
    editable = selectors.version_editable(user=request.user, version=version)
    catalogue = selectors.source_class_catalogue()
    row = _row(
        version,
        order[position - 1],
        position,
        position == len(order),
        catalogue,
        editable,
        editing,
        accept_form,
    )
    return {
        "decision_type": version.decision_type,
        "version": version,
        "editable": editable,
        "lock_version": version.lock_version,
        "row": row,
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
    proposition: Proposition | None = None,
    access_form: forms.AccessForm | None = None,
    people_errors: list[str] | None = None,
    **editor: Any,
) -> HttpResponse:
    """The whole page, or for htmx only the named fragment, built from fresh rows: only that
    fragment's context is computed (`proposition` names the row of the `row` fragment)."""
    # Fresh after a change, with its decision type in the same query.
    version.refresh_from_db(from_queryset=ContractVersion.objects.select_related("decision_type"))
    if request.htmx and fragment in PANELS:
        context = _panels_context(request, version)
    elif request.htmx and fragment == "people":
        context = _people_context(request, version.decision_type, access_form, people_errors)
    elif request.htmx and fragment == ROW:
        assert proposition is not None, "the row fragment names its proposition"
        context = _row_context(request, version, proposition, **editor)
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


def conflict(request: HtmxRequest, version: ContractVersion, message: str) -> HttpResponse:
    """409 with the whole editor as it now is, nothing saved: someone else changed the
    contract, so every fragment may be out of date, whichever one the request targeted."""
    return _whole_editor(
        changed(render_version(request, version, status=CONFLICT, conflict=message))
    )


def with_lock(response: HttpResponse, version: ContractVersion) -> HttpResponse:
    """Append the `lock` partial: swapped out of band, it moves every form's lock version."""
    response.content += render_to_string(
        f"{EDITOR_TEMPLATE}#lock", {"lock_version": version.lock_version}
    ).encode()
    return response


def edit(
    request: HtmxRequest,
    version: ContractVersion,
    form: django_forms.Form,
    change: Callable[[dict[str, Any]], object],
    *,
    fragment: str = EDITOR,
    proposition: Proposition | None = None,
    on_invalid: Callable[[django_forms.Form], dict[str, Any]] | None = None,
) -> HttpResponse:
    """Validate `form`, apply `change` through a service and answer.

    Success: for htmx the `fragment` the change touched (a row, the propositions, the
    settings) with the new lock version out of band and the contractChanged event on which
    the lint, preview and history panels refresh themselves; without htmx a redirect to the
    page. Invalid input: 422 with the errors inline in the same fragment. A stale lock
    version: 409 with the whole editor as it now is and nothing saved.
    """
    if form.is_valid():
        try:
            change(form.cleaned_data)
        except services.EditConflict as stale:
            return conflict(request, version, stale.message)
        except ValidationError as error:
            form_errors(form, error)
        else:
            if not request.htmx:
                return redirect(_version_url(version) + "#editor")
            response = render_version(request, version, fragment, proposition=proposition)
            return changed(with_lock(response, version) if fragment != EDITOR else response)
    context = on_invalid(form) if on_invalid else {"errors": error_messages(form)}
    if "errors" in context:
        # Errors without a form of their own to show them in are shown above the editor.
        return _whole_editor(render_version(request, version, status=FORM_INVALID, **context))
    return render_version(
        request, version, fragment, status=FORM_INVALID, proposition=proposition, **context
    )


def _whole_editor(response: HttpResponse) -> HttpResponse:
    """Swap the answer for the whole editor, whichever fragment the request targeted."""
    return reswap(retarget(response, "#editor"), "outerHTML")
