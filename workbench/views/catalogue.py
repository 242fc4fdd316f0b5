"""The shared source-class catalogue: the list, a manager's create and edit (each previewing
what the change does before it is saved), a policy owner's proposals and their decision."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from contracts import selectors, services
from contracts.models import SourceClass, SourceClassProposal
from workbench import forms
from workbench.http import HtmxRequest

from .helpers import CONFLICT, FORM_INVALID, form_errors, found

# Messages tests assert on.
SOURCE_CLASS_SAVED = "Saved source class '{key}'."
PROPOSAL_SENT = "Proposed a change to '{key}': a catalogue manager will accept or reject it."
PROPOSAL_ACCEPTED = "Accepted the proposal: '{key}' is changed."
PROPOSAL_REJECTED = "Rejected the proposal for '{key}'; its proposer sees your reason."
CONFIRM_ON_THE_PAGE = "Read what accepting changes below, then confirm."

CATALOGUE_FORM = "workbench/source_class_form.html"
PROPOSAL_PAGE = "workbench/source_class_proposal.html"


def _catalogue_refused(request: HtmxRequest, message: str) -> HttpResponse:
    """A 403 that says which role the catalogue action needs."""
    return render(request, "workbench/source_class_refused.html", {"message": message}, status=403)


@require_GET
def source_class_list(request: HtmxRequest) -> HttpResponse:
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
            "history": selectors.catalogue_history(user=request.user),
        },
    )


def _catalogue_values(form: forms.forms.BaseForm) -> dict[str, Any]:
    return {f: form.cleaned_data[f] for f in forms.SourceClassEditForm.Meta.fields}


def _catalogue_preview(
    request: HtmxRequest, context: dict[str, Any], *, key: str
) -> HttpResponse | None:
    """Before a change is saved: the page showing what it does, with a confirm button.
    None when the POST is the confirmation. A change that changes nothing is refused."""
    after = _catalogue_values(context["form"])
    impact = selectors.source_class_impact(user=request.user, key=key, after=after)
    if not impact.changes:
        context["form"].add_error(None, services.NO_CATALOGUE_CHANGE)
        return render(request, CATALOGUE_FORM, context, status=FORM_INVALID)
    if "revise" in request.POST:
        return render(request, CATALOGUE_FORM, context)
    if "confirm" not in request.POST:
        return render(request, CATALOGUE_FORM, {**context, "impact": impact})
    return None


@require_http_methods(["GET", "POST"])
def source_class_create(request: HtmxRequest) -> HttpResponse:
    if not selectors.can_manage_catalogue(user=request.user):
        return _catalogue_refused(request, services.CATALOGUE_MANAGERS_ONLY)
    form = forms.SourceClassForm(request.POST if request.method == "POST" else None)
    context = {"form": form, "creating": True, "action": reverse("source_class_create")}
    if request.method == "POST" and form.is_valid():
        key = form.cleaned_data["key"]
        if key in selectors.source_class_catalogue():
            form.add_error("key", services.DUPLICATE_SOURCE_CLASS)
            return render(request, CATALOGUE_FORM, context, status=FORM_INVALID)
        preview = _catalogue_preview(request, context, key=key)
        if preview is not None:
            return preview
        try:
            services.source_class_create(actor=request.user, key=key, **_catalogue_values(form))
        except ValidationError as error:
            form_errors(form, error)
        else:
            messages.success(request, SOURCE_CLASS_SAVED.format(key=key))
            return redirect("source_class_list")
    return render(request, CATALOGUE_FORM, context, status=FORM_INVALID if form.is_bound else 200)


@require_http_methods(["GET", "POST"])
def source_class_edit(request: HtmxRequest, key: str) -> HttpResponse:
    if not selectors.can_manage_catalogue(user=request.user):
        return _catalogue_refused(request, services.CATALOGUE_MANAGERS_ONLY)
    source_class = found(selectors.source_class_get, key=key)
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
        return render(request, CATALOGUE_FORM, context, status=FORM_INVALID)
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
        context["conflict"] = error.message
        return render(request, CATALOGUE_FORM, context, status=CONFLICT)
    except ValidationError as error:
        form_errors(form, error)
        return render(request, CATALOGUE_FORM, context, status=FORM_INVALID)
    messages.success(request, SOURCE_CLASS_SAVED.format(key=key))
    return redirect("source_class_list")


def _source_class_edit_form(source_class: SourceClass) -> forms.SourceClassEditForm:
    return forms.SourceClassEditForm(
        instance=source_class, initial={"lock_version": source_class.lock_version}
    )


@require_http_methods(["GET", "POST"])
def source_class_propose(request: HtmxRequest, key: str | None = None) -> HttpResponse:
    """A policy owner proposes new values for a class (or a new class, without `key`)."""
    if not selectors.can_propose_catalogue_change(user=request.user):
        return _catalogue_refused(request, services.PROPOSERS_ONLY)
    source_class = found(selectors.source_class_get, key=key) if key is not None else None
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
            form_errors(form, error)
        else:
            messages.success(request, PROPOSAL_SENT.format(key=proposal.key))
            return redirect("source_class_proposal", pk=proposal.pk)
    return render(request, CATALOGUE_FORM, context, status=FORM_INVALID if form.is_bound else 200)


def _render_proposal(
    request: HtmxRequest,
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
def source_class_proposal(request: HtmxRequest, pk: int) -> HttpResponse:
    return _render_proposal(request, found(selectors.proposal_for_user, user=request.user, pk=pk))


def _decide_proposal(
    request: HtmxRequest, pk: int, decide: Callable[..., SourceClassProposal], done: str
) -> HttpResponse:
    if not selectors.can_manage_catalogue(user=request.user):
        return _catalogue_refused(request, services.CATALOGUE_MANAGERS_ONLY)
    proposal = found(selectors.proposal_for_user, user=request.user, pk=pk)
    form = forms.ProposalDecisionForm(request.POST)
    if not form.is_valid():
        return _render_proposal(request, proposal, form=form, status=FORM_INVALID)
    try:
        decided = decide(proposal, form.cleaned_data)
    except services.EditConflict as error:
        return _render_proposal(request, proposal, conflict=error.message, status=CONFLICT)
    except ValidationError as error:
        form_errors(form, error)
        proposal.refresh_from_db()
        return _render_proposal(request, proposal, form=form, status=FORM_INVALID)
    messages.success(request, done.format(key=decided.key))
    return redirect("source_class_list")


@require_POST
def source_class_proposal_accept(request: HtmxRequest, pk: int) -> HttpResponse:
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
def source_class_proposal_reject(request: HtmxRequest, pk: int) -> HttpResponse:
    def reject(proposal: SourceClassProposal, data: dict[str, Any]) -> SourceClassProposal:
        return services.source_class_proposal_reject(
            actor=request.user, proposal=proposal, note=data["note"]
        )

    return _decide_proposal(request, pk, reject, PROPOSAL_REJECTED)
