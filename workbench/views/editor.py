"""The browser UI: small function views that parse input, call a service or selector, render.

The contract editor is one template, `contracts/decision_type.html`, whose fragments are named
partials: an htmx request gets only the fragment it swaps, a plain request the whole page, so
every page works without JavaScript. Permission is checked here and in the selectors, never
only in a template: a client can ask for any fragment directly.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import Any

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import trigger_client_event

from contracts import selectors, services
from contracts.models import (
    ContractVersion,
    DecisionType,
    Proposition,
    SourceClass,
    SourceClassProposal,
)
from workbench import forms

EDITOR_TEMPLATE = "contracts/decision_type.html"
CHANGED_EVENT = "contractChanged"

# Messages tests assert on.
SOURCE_CLASS_SAVED = "Saved source class '{key}'."
PROPOSAL_SENT = "Proposed a change to '{key}': a catalogue manager will accept or reject it."
PROPOSAL_ACCEPTED = "Accepted the proposal: '{key}' is changed."
PROPOSAL_REJECTED = "Rejected the proposal for '{key}'; its proposer sees your reason."
CONFIRM_ON_THE_PAGE = "Read what accepting changes below, then confirm."
DECISION_TYPE_CREATED = "Created '{key}' with an empty draft, version 1."
PROPOSITION_GONE = "That proposition no longer exists; someone else deleted it."
NO_SUCH_PERSON = "There is nobody with this username."


# --------------------------------------------------------------------------- helpers


def _form_errors(form: forms.forms.Form, error: ValidationError) -> None:
    """Put a service's ValidationError on the form: on its field where the form has one."""
    if hasattr(error, "error_dict"):
        for field, errors in error.message_dict.items():
            form.add_error(field if field in form.fields else None, errors)
    else:
        form.add_error(None, error.messages)


def _require_edit(request: HttpRequest, version: ContractVersion) -> None:
    if not selectors.can_edit(user=request.user, decision_type=version.decision_type):
        raise PermissionDenied(services.NOT_ALLOWED)


def _class_choices(exclude: list[str] | tuple[str, ...] = ()) -> list[tuple[str, str]]:
    return [
        (c.key, f"{c.key} — {c.label}" + (" (weak)" if c.weak else ""))
        for c in selectors.source_classes()
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


def _panels_context(version: ContractVersion) -> dict[str, Any]:
    """What the lint, preview and history panels show."""
    preview = selectors.version_preview(version=version)
    return {
        "decision_type": version.decision_type,
        "version": version,
        "findings": selectors.version_lint(version=version),
        "preview": preview,
        "preview_json": json.dumps(
            preview.compiler_document if preview.valid else preview.document, indent=2
        ),
        "history": selectors.history(decision_type=version.decision_type),
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
    editable = version.is_editable and selectors.can_edit(
        user=request.user, decision_type=decision_type
    )
    lock = {"lock_version": version.lock_version}
    catalogue = selectors.source_class_catalogue()
    rows = []
    for proposition in version.propositions.all():
        row = PropositionRow(
            proposition=proposition,
            classes=[AcceptedClass(k, catalogue.get(k)) for k in proposition.accepted_classes],
            accept_form=forms.AcceptedClassForm(
                initial=lock, class_choices=_class_choices(proposition.accepted_classes)
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
        "lock_version": version.lock_version,
        "rows": rows,
        "add_form": add_form
        or forms.PropositionAddForm(initial=lock, class_choices=_class_choices()),
        "settings_form": settings_form or forms.SettingsForm.for_version(version),
        "errors": errors or [],
        "conflict": conflict,
        # A frozen contract changes through a new draft, which needs no open version.
        "can_start_draft": not version.is_editable
        and selectors.can_edit(user=request.user, decision_type=decision_type)
        and not decision_type.versions.filter(status__in=ContractVersion.OPEN_STATUSES).exists(),
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
    if request.htmx and partial in PANELS:
        context = _panels_context(version)
    elif request.htmx and partial == "people":
        context = _people_context(request, version.decision_type, access_form, people_errors)
    elif request.htmx:
        context = _editor_context(request, version, **editor)
    else:
        context = {
            **_panels_context(version),
            **_people_context(request, version.decision_type, access_form, people_errors),
            **_editor_context(request, version, **editor),
        }
    template = f"{EDITOR_TEMPLATE}#{partial}" if request.htmx else EDITOR_TEMPLATE
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
            response = _render_version(request, version, status=409, conflict=conflict.message)
            trigger_client_event(response, CHANGED_EVENT)
            return response
        except ValidationError as error:
            _form_errors(form, error)
        else:
            if not request.htmx:
                return redirect(_version_url(version) + "#editor")
            response = _render_version(request, version)
            trigger_client_event(response, CHANGED_EVENT)
            return response
    context = (
        on_invalid(form)
        if on_invalid
        else {"errors": [e for errors in form.errors.values() for e in errors]}
    )
    return _render_version(request, version, status=422, **context)


def _proposition(version: ContractVersion, pk: int) -> Proposition | None:
    return version.propositions.filter(pk=pk).first()


def _editable_proposition(
    view: Callable[[HttpRequest, ContractVersion, Proposition], HttpResponse],
) -> Callable[..., HttpResponse]:
    """The prologue of every proposition edit: a version I may edit, and the row, still there."""

    @wraps(view)
    def wrapper(request: HttpRequest, key: str, number: int, pk: int) -> HttpResponse:
        version = selectors.version_for_user(user=request.user, key=key, number=number)
        _require_edit(request, version)
        proposition = _proposition(version, pk)
        if proposition is None:
            return _gone(request, version)
        return view(request, version, proposition)

    return wrapper


def _gone(request: HttpRequest, version: ContractVersion) -> HttpResponse:
    response = _render_version(request, version, status=409, conflict=PROPOSITION_GONE)
    trigger_client_event(response, CHANGED_EVENT)
    return response


# --------------------------------------------------------------------------- dashboard


@require_GET
def dashboard(request: HttpRequest) -> HttpResponse:
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
def decision_type_create(request: HttpRequest) -> HttpResponse:
    if not request.user.has_perm("contracts.add_decisiontype"):
        raise PermissionDenied(services.NOT_ALLOWED)
    form = forms.DecisionTypeForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            decision_type = services.decision_type_create(actor=request.user, **form.cleaned_data)
        except ValidationError as error:
            _form_errors(form, error)
        else:
            messages.success(request, DECISION_TYPE_CREATED.format(key=decision_type.key))
            return redirect("decision_type_detail", key=decision_type.key)
    status = 422 if form.is_bound else 200
    return render(request, "workbench/decision_type_form.html", {"form": form}, status=status)


# --------------------------------------------------------------------------- source classes


CATALOGUE_FORM = "workbench/source_class_form.html"
PROPOSAL_PAGE = "workbench/source_class_proposal.html"


def _catalogue_refused(request: HttpRequest, message: str) -> HttpResponse:
    """A 403 that says which role the catalogue action needs."""
    return render(request, "workbench/source_class_refused.html", {"message": message}, status=403)


@require_GET
def source_class_list(request: HttpRequest) -> HttpResponse:
    manager = selectors.can_manage_catalogue(user=request.user)
    return render(
        request,
        "workbench/source_classes.html",
        {
            "source_classes": selectors.source_classes(),
            "can_manage": manager,
            "can_propose": selectors.can_propose_catalogue_change(user=request.user),
            "open_proposals": selectors.open_proposals() if manager else None,
            "my_proposals": selectors.proposals_by(user=request.user),
            "history": selectors.catalogue_history(),
        },
    )


def _catalogue_values(form: forms.forms.Form) -> dict[str, Any]:
    return {f: form.cleaned_data[f] for f in forms.SourceClassEditForm.Meta.fields}


def _catalogue_preview(
    request: HttpRequest, context: dict[str, Any], *, key: str
) -> HttpResponse | None:
    """Before a change is saved: the page showing what it does, with a confirm button.
    None when the POST is the confirmation. A change that changes nothing is refused."""
    after = _catalogue_values(context["form"])
    impact = selectors.source_class_impact(user=request.user, key=key, after=after)
    if not impact.changes:
        context["form"].add_error(None, services.NO_CATALOGUE_CHANGE)
        return render(request, CATALOGUE_FORM, context, status=422)
    if "revise" in request.POST:
        return render(request, CATALOGUE_FORM, context)
    if "confirm" not in request.POST:
        return render(request, CATALOGUE_FORM, {**context, "impact": impact})
    return None


@require_http_methods(["GET", "POST"])
def source_class_create(request: HttpRequest) -> HttpResponse:
    if not selectors.can_manage_catalogue(user=request.user):
        return _catalogue_refused(request, services.CATALOGUE_MANAGERS_ONLY)
    form = forms.SourceClassForm(request.POST if request.method == "POST" else None)
    context = {"form": form, "creating": True, "action": reverse("source_class_create")}
    if request.method == "POST" and form.is_valid():
        key = form.cleaned_data["key"]
        if key in selectors.source_class_catalogue():
            form.add_error("key", services.DUPLICATE_SOURCE_CLASS)
            return render(request, CATALOGUE_FORM, context, status=422)
        preview = _catalogue_preview(request, context, key=key)
        if preview is not None:
            return preview
        try:
            services.source_class_create(actor=request.user, key=key, **_catalogue_values(form))
        except ValidationError as error:
            _form_errors(form, error)
        else:
            messages.success(request, SOURCE_CLASS_SAVED.format(key=key))
            return redirect("source_class_list")
    return render(request, CATALOGUE_FORM, context, status=422 if form.is_bound else 200)


@require_http_methods(["GET", "POST"])
def source_class_edit(request: HttpRequest, key: str) -> HttpResponse:
    if not selectors.can_manage_catalogue(user=request.user):
        return _catalogue_refused(request, services.CATALOGUE_MANAGERS_ONLY)
    source_class = selectors.source_class_get(key=key)
    context: dict[str, Any] = {
        "source_class": source_class,
        "action": reverse("source_class_edit", kwargs={"key": key}),
    }
    if request.method != "POST":
        context["form"] = _source_class_edit_form(source_class)
        return render(request, CATALOGUE_FORM, context)
    # A ModelForm would write the posted values onto the instance; keep it untouched.
    form = forms.SourceClassEditForm(request.POST, instance=SourceClass(key=key))
    context["form"] = form
    if not form.is_valid():
        return render(request, CATALOGUE_FORM, context, status=422)
    preview = _catalogue_preview(request, context, key=key)
    if preview is not None:
        return preview
    try:
        services.source_class_update(
            actor=request.user,
            source_class=source_class,
            expected_lock_version=form.cleaned_data["lock_version"],
            **_catalogue_values(form),
        )
    except services.EditConflict as error:
        source_class.refresh_from_db()
        context["form"] = _source_class_edit_form(source_class)
        return render(request, CATALOGUE_FORM, {**context, "conflict": error.message}, status=409)
    except ValidationError as error:
        _form_errors(form, error)
        return render(request, CATALOGUE_FORM, context, status=422)
    messages.success(request, SOURCE_CLASS_SAVED.format(key=key))
    return redirect("source_class_list")


def _source_class_edit_form(source_class: SourceClass) -> forms.SourceClassEditForm:
    return forms.SourceClassEditForm(
        instance=source_class, initial={"lock_version": source_class.lock_version}
    )


@require_http_methods(["GET", "POST"])
def source_class_propose(request: HttpRequest, key: str | None = None) -> HttpResponse:
    """A policy owner proposes new values for a class (or a new class, without `key`)."""
    if not selectors.can_propose_catalogue_change(user=request.user):
        return _catalogue_refused(request, services.PROPOSERS_ONLY)
    source_class = selectors.source_class_get(key=key) if key is not None else None
    form_class = forms.SourceClassProposalForm if source_class else forms.NewSourceClassProposalForm
    if request.method == "POST":
        form = form_class(request.POST, instance=SourceClassProposal())
    else:
        form = form_class(initial=source_class.field_values() if source_class else None)
    context = {
        "form": form,
        "source_class": source_class,
        "proposing": True,
        "creating": source_class is None,
        "action": reverse("source_class_propose", kwargs={"key": key})
        if key is not None
        else reverse("source_class_propose_new"),
    }
    if request.method == "POST" and form.is_valid():
        values = {f: form.cleaned_data[f] for f in forms.SourceClassProposalForm.Meta.fields}
        try:
            proposal = services.source_class_propose(
                actor=request.user,
                source_class=source_class,
                key=form.cleaned_data.get("key", ""),
                **values,
            )
        except ValidationError as error:
            _form_errors(form, error)
        else:
            messages.success(request, PROPOSAL_SENT.format(key=proposal.key))
            return redirect("source_class_proposal", pk=proposal.pk)
    return render(request, CATALOGUE_FORM, context, status=422 if form.is_bound else 200)


def _render_proposal(
    request: HttpRequest,
    proposal: SourceClassProposal,
    *,
    form: forms.ProposalDecisionForm | None = None,
    errors: list[str] | None = None,
    conflict: str | None = None,
    status: int = 200,
) -> HttpResponse:
    """The proposal, and while it is open what accepting it would do now."""
    current = selectors.source_class_catalogue().get(proposal.key)
    impact = None
    if proposal.is_open:
        before = current.field_values() if current and proposal.source_class_id else {}
        impact = selectors.source_class_impact(
            user=request.user, key=proposal.key, after=proposal.applied_to(before)
        )
    lock = {"lock_version": current.lock_version if current and proposal.source_class_id else None}
    context = {
        "proposal": proposal,
        "impact": impact,
        "proposed": [(f, getattr(proposal, f)) for f in proposal.proposed_fields],
        "can_decide": proposal.is_open and selectors.can_manage_catalogue(user=request.user),
        "decision_form": form or forms.ProposalDecisionForm(initial=lock),
        "errors": errors or [],
        "conflict": conflict,
    }
    return render(request, PROPOSAL_PAGE, context, status=status)


@require_GET
def source_class_proposal(request: HttpRequest, pk: int) -> HttpResponse:
    return _render_proposal(request, selectors.proposal_for_user(user=request.user, pk=pk))


def _decide_proposal(
    request: HttpRequest, pk: int, decide: Callable[..., SourceClassProposal], done: str
) -> HttpResponse:
    if not selectors.can_manage_catalogue(user=request.user):
        return _catalogue_refused(request, services.CATALOGUE_MANAGERS_ONLY)
    proposal = selectors.proposal_for_user(user=request.user, pk=pk)
    form = forms.ProposalDecisionForm(request.POST)
    if not form.is_valid():
        return _render_proposal(request, proposal, form=form, status=422)
    try:
        decided = decide(proposal, form.cleaned_data)
    except services.EditConflict as error:
        return _render_proposal(request, proposal, conflict=error.message, status=409)
    except ValidationError as error:
        _form_errors(form, error)
        proposal.refresh_from_db()
        return _render_proposal(request, proposal, form=form, status=422)
    messages.success(request, done.format(key=decided.key))
    return redirect("source_class_list")


@require_POST
def source_class_proposal_accept(request: HttpRequest, pk: int) -> HttpResponse:
    """Accept from the proposal page, which shows the impact: the form carries `confirm`."""

    def accept(proposal: SourceClassProposal, data: dict[str, Any]) -> SourceClassProposal:
        if "confirm" not in request.POST:
            raise ValidationError(CONFIRM_ON_THE_PAGE)
        return services.source_class_proposal_accept(
            actor=request.user,
            proposal=proposal,
            expected_lock_version=data["lock_version"],
            note=data["note"],
        )

    return _decide_proposal(request, pk, accept, PROPOSAL_ACCEPTED)


@require_POST
def source_class_proposal_reject(request: HttpRequest, pk: int) -> HttpResponse:
    def reject(proposal: SourceClassProposal, data: dict[str, Any]) -> SourceClassProposal:
        return services.source_class_proposal_reject(
            actor=request.user, proposal=proposal, note=data["note"]
        )

    return _decide_proposal(request, pk, reject, PROPOSAL_REJECTED)


# --------------------------------------------------------------------------- contract editor


@require_GET
def decision_type_detail(request: HttpRequest, key: str) -> HttpResponse:
    decision_type = selectors.decision_type_for_user(user=request.user, key=key)
    version = selectors.current_version(decision_type=decision_type)
    if version is None:
        return render(request, EDITOR_TEMPLATE, {"decision_type": decision_type, "version": None})
    return _render_version(request, version)


def _access_change(
    request: HttpRequest,
    key: str,
    form: forms.forms.Form,
    change: Callable[[DecisionType, Any, dict[str, Any]], object],
) -> HttpResponse:
    """Grant or revoke a role, then answer with the people card (htmx) or the page."""
    decision_type = selectors.decision_type_for_user(user=request.user, key=key)
    if not selectors.can_edit(user=request.user, decision_type=decision_type):
        raise PermissionDenied(services.NOT_ALLOWED)
    version = selectors.current_version(decision_type=decision_type)
    if form.is_valid():
        person = get_user_model().objects.filter(username=form.cleaned_data["username"]).first()
        if person is None:
            form.add_error("username", NO_SUCH_PERSON)
        else:
            try:
                change(decision_type, person, form.cleaned_data)
            except ValidationError as error:
                _form_errors(form, error)
            else:
                if not request.htmx:
                    url = reverse("decision_type_detail", kwargs={"key": key})
                    return redirect(url + "#people")
                response = _render_version(request, version, "people")
                trigger_client_event(response, CHANGED_EVENT)
                return response
    return _render_version(
        request,
        version,
        "people",
        status=422,
        access_form=form if isinstance(form, forms.AccessForm) else None,
        people_errors=[e for errors in form.errors.values() for e in errors],
    )


@require_POST
def decision_type_access(request: HttpRequest, key: str) -> HttpResponse:
    return _access_change(
        request,
        key,
        forms.AccessForm(request.POST),
        lambda decision_type, person, data: services.access_grant(
            actor=request.user, decision_type=decision_type, user=person, role=data["role"]
        ),
    )


@require_POST
def decision_type_access_revoke(request: HttpRequest, key: str) -> HttpResponse:
    return _access_change(
        request,
        key,
        forms.RevokeForm(request.POST),
        lambda decision_type, person, data: services.access_revoke(
            actor=request.user, decision_type=decision_type, user=person
        ),
    )


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
        return JsonResponse({"result": "invalid", "errors": problems}, status=422)
    return JsonResponse(preview.compiler_document, json_dumps_params={"indent": 2})


@require_POST
def version_settings(request: HttpRequest, key: str, number: int) -> HttpResponse:
    version = selectors.version_for_user(user=request.user, key=key, number=number)
    _require_edit(request, version)
    form = forms.SettingsForm(request.POST)
    return _edit(
        request,
        version,
        form,
        lambda data: services.version_update_settings(
            actor=request.user,
            version=version,
            expected_lock_version=data["lock_version"],
            purposes=data["purposes"],
            policy_name=data["policy_name"],
            policy_version=data["policy_version"],
            min_relevance=data["min_relevance"],
            role_order=data["role_order"],
        ),
        on_invalid=lambda form: {"settings_form": form},
    )


@require_POST
def proposition_add(request: HttpRequest, key: str, number: int) -> HttpResponse:
    version = selectors.version_for_user(user=request.user, key=key, number=number)
    _require_edit(request, version)
    form = forms.PropositionAddForm(request.POST, class_choices=_class_choices())
    return _edit(
        request,
        version,
        form,
        lambda data: services.proposition_add(
            actor=request.user,
            version=version,
            expected_lock_version=data["lock_version"],
            key=data["key"],
            description=data["description"],
            accepted_classes=data["accepted_classes"],
            required=data["required"],
            max_items=data["max_items"],
        ),
        on_invalid=lambda form: {"add_form": form},
    )


@require_http_methods(["GET", "POST"])
@_editable_proposition
def proposition_edit(
    request: HttpRequest, version: ContractVersion, proposition: Proposition
) -> HttpResponse:
    if request.method == "GET":
        form = forms.PropositionForm(
            initial={
                "lock_version": version.lock_version,
                "key": proposition.key,
                "description": proposition.description,
                "required": proposition.required,
                "max_items": proposition.max_items,
            }
        )
        return _render_version(request, version, editing=(proposition.pk, form))
    return _edit(
        request,
        version,
        forms.PropositionForm(request.POST),
        lambda data: services.proposition_update(
            actor=request.user,
            proposition=proposition,
            expected_lock_version=data["lock_version"],
            key=data["key"],
            description=data["description"],
            required=data["required"],
            max_items=data["max_items"],
        ),
        on_invalid=lambda form: {"editing": (proposition.pk, form)},
    )


@require_POST
@_editable_proposition
def proposition_delete(
    request: HttpRequest, version: ContractVersion, proposition: Proposition
) -> HttpResponse:
    return _edit(
        request,
        version,
        forms.LockForm(request.POST),
        lambda data: services.proposition_delete(
            actor=request.user,
            proposition=proposition,
            expected_lock_version=data["lock_version"],
        ),
    )


@require_POST
@_editable_proposition
def proposition_move(
    request: HttpRequest, version: ContractVersion, proposition: Proposition
) -> HttpResponse:
    return _edit(
        request,
        version,
        forms.MoveForm(request.POST),
        lambda data: services.proposition_move(
            actor=request.user,
            proposition=proposition,
            expected_lock_version=data["lock_version"],
            direction=data["direction"],
        ),
    )


@require_POST
@_editable_proposition
def accepted_class_add(
    request: HttpRequest, version: ContractVersion, proposition: Proposition
) -> HttpResponse:
    form = forms.AcceptedClassForm(
        request.POST, class_choices=_class_choices(proposition.accepted_classes)
    )
    return _edit(
        request,
        version,
        form,
        lambda data: services.accepted_class_add(
            actor=request.user,
            proposition=proposition,
            expected_lock_version=data["lock_version"],
            class_key=data["class_key"],
        ),
        on_invalid=lambda form: {"accept_form": (proposition.pk, form)},
    )


@require_POST
@_editable_proposition
def accepted_class_move(
    request: HttpRequest, version: ContractVersion, proposition: Proposition
) -> HttpResponse:
    return _edit(
        request,
        version,
        forms.AcceptedClassMoveForm(request.POST),
        lambda data: services.accepted_class_move(
            actor=request.user,
            proposition=proposition,
            expected_lock_version=data["lock_version"],
            class_key=data["class_key"],
            direction=data["direction"],
        ),
    )


@require_POST
@_editable_proposition
def accepted_class_remove(
    request: HttpRequest, version: ContractVersion, proposition: Proposition
) -> HttpResponse:
    return _edit(
        request,
        version,
        forms.AcceptedClassRemoveForm(request.POST),
        lambda data: services.accepted_class_remove(
            actor=request.user,
            proposition=proposition,
            expected_lock_version=data["lock_version"],
            class_key=data["class_key"],
        ),
    )


# --------------------------------------------------------------------------- errors


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """handler400: say which parameter was wrong (Django's default page says nothing)."""
    return render(request, "400.html", {"message": str(exception)}, status=400)
