"""A version's Suite strength panel: the page (which polls while the worker computes a run),
starting a run, and adding the scenario a surviving mutant's proposal asks for.

Anyone who may see the decision type reads the panel; only its owners start a run or add a
scenario. Both are plain POST forms: they work without JavaScript, and the page they return
to polls only while a run is being computed."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HTMX_STOP_POLLING

from contracts import selectors as contract_selectors
from contracts.models import ContractVersion
from scenarios import selectors, services
from workbench.forms.scenarios import ProposalForm

from .helpers import FORM_INVALID, page_or_partial, require_edit
from .not_found import or_404

# Messages tests assert on.
STRENGTH_QUEUED = "Suite strength of version {number} is being computed."
STRENGTH_DONE = "Suite strength of version {number} is computed."
SCENARIO_ADDED = "Added the scenario '{name}'. Run suite strength again to see the mistake caught."
NOT_PINNED = "Not pinned (a scenario has no field for them yet): {keys}."

TEMPLATE = "scenarios/strength.html"


@require_GET
def version_strength(request: HttpRequest, key: str, number: int) -> HttpResponse:
    version = contract_selectors.version_for_user(user=request.user, key=key, number=number)
    return _render(request, version)


def _render(
    request: HttpRequest,
    version: ContractVersion,
    *,
    errors: list[str] | None = None,
    status: int = 200,
) -> HttpResponse:
    run = selectors.latest_mutation_run(version=version)
    may_edit = services.can_edit(request.user, version.decision_type)
    context = {
        "decision_type": version.decision_type,
        "version": version,
        "run": run,
        "panel": selectors.strength_panel(run=run) if run is not None else None,
        "earlier_runs": list(selectors.mutation_runs(version=version))[1:],
        "can_start": may_edit and not (run is not None and run.is_active),
        "can_add": may_edit,
        "errors": errors or [],
    }
    polling = bool(request.htmx) and bool(request.GET.get("poll"))
    if polling and not (run is not None and run.is_active):
        status = HTMX_STOP_POLLING  # the answer with the report stops the polling
    return render(request, page_or_partial(request, TEMPLATE, "strength"), context, status=status)


def _page(version: ContractVersion, anchor: str = "") -> str:
    url = reverse(
        "version_strength", kwargs={"key": version.decision_type.key, "number": version.number}
    )
    return f"{url}#{anchor}" if anchor else url


@require_POST
def version_strength_start(request: HttpRequest, key: str, number: int) -> HttpResponse:
    version = contract_selectors.version_for_user(user=request.user, key=key, number=number)
    require_edit(request, version.decision_type)
    try:
        run = services.mutation_run_start(actor=request.user, version=version)
    except ValidationError as error:
        return _render(request, version, errors=error.messages, status=FORM_INVALID)
    # A worker that was idle may have computed it already (the tests' backend always has).
    said = STRENGTH_QUEUED if run.is_active else STRENGTH_DONE
    messages.success(request, said.format(number=version.number))
    return redirect(_page(version))


@require_POST
def version_strength_add(request: HttpRequest, key: str, number: int) -> HttpResponse:
    """ "Add this scenario": the proposal of a surviving mutant of one of the version's runs
    becomes a scenario (`services.proposal_add`)."""
    version = contract_selectors.version_for_user(user=request.user, key=key, number=number)
    require_edit(request, version.decision_type)
    form = ProposalForm(request.POST)
    if not form.is_valid():
        errors = [f"{name}: {' '.join(e)}" for name, e in form.errors.items()]
        return _render(request, version, errors=errors, status=FORM_INVALID)
    run = or_404(selectors.mutation_run_of, version=version, pk=form.cleaned_data["run"])
    try:
        scenario, unpinned = services.proposal_add(
            actor=request.user, run=run, mutant_key=form.cleaned_data["mutant"]
        )
    except ValidationError as error:
        return _render(request, version, errors=error.messages, status=FORM_INVALID)
    messages.success(request, SCENARIO_ADDED.format(name=scenario.name))
    if unpinned:
        messages.warning(request, NOT_PINNED.format(keys=", ".join(unpinned)))
    return redirect(_page(version))
