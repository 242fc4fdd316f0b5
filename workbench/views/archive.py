"""Archive, restore and clone: POST only (CSRF as everywhere), owners only (the services
check `change_decisiontype`; a viewer gets 403), then back to the page with what happened."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from scenarios import selectors, services
from scenarios.models import CorpusCandidate

from .helpers import require_edit as _require_edit
from .not_found import or_404

# Messages tests assert on.
ARCHIVED = "Archived '{name}': it is hidden from lists and runs; restore it from Archived."
RESTORED = "Restored '{name}'."
CLONED = "Cloned as '{name}'."


def _act(request: HttpRequest, action: Callable[[], Any], done: str, name: str) -> bool:
    try:
        action()
    except ValidationError as error:
        for message in error.messages:
            messages.error(request, message)
        return False
    messages.success(request, done.format(name=name))
    return True


def _scenario_toggle(service: Callable[..., Any], done: str) -> Callable[..., HttpResponse]:
    @require_POST
    def view(request: HttpRequest, key: str, pk: int) -> HttpResponse:
        scenario = or_404(selectors.scenario_for_user, user=request.user, key=key, pk=pk)
        _require_edit(request, scenario.decision_type)
        _act(request, lambda: service(actor=request.user, scenario=scenario), done, scenario.name)
        return redirect("scenarios:suite", key=key)

    return view


scenario_archive = _scenario_toggle(services.scenario_archive, ARCHIVED)
scenario_restore = _scenario_toggle(services.scenario_restore, RESTORED)


@require_POST
def scenario_clone(request: HttpRequest, key: str, pk: int) -> HttpResponse:
    scenario = or_404(selectors.scenario_for_user, user=request.user, key=key, pk=pk)
    _require_edit(request, scenario.decision_type)
    try:
        copy = services.scenario_clone(actor=request.user, scenario=scenario)
    except ValidationError as error:
        for message in error.messages:
            messages.error(request, message)
        return redirect("scenarios:scenario_detail", key=key, pk=pk)
    messages.success(request, CLONED.format(name=copy.name))
    return redirect("scenarios:scenario_edit", key=key, pk=copy.pk)


def _corpus_toggle(service: Callable[..., Any], done: str) -> Callable[..., HttpResponse]:
    @require_POST
    def view(request: HttpRequest, key: str, pk: int) -> HttpResponse:
        corpus = or_404(selectors.corpus_for_user, user=request.user, key=key, pk=pk)
        _require_edit(request, corpus.decision_type)
        if _act(request, lambda: service(actor=request.user, corpus=corpus), done, corpus.name):
            return redirect("scenarios:suite", key=key)
        return redirect("scenarios:corpus_detail", key=key, pk=pk)

    return view


corpus_archive = _corpus_toggle(services.corpus_archive, ARCHIVED)
corpus_restore = _corpus_toggle(services.corpus_restore, RESTORED)


def _candidate(request: HttpRequest, key: str, pk: int, candidate_id: str) -> CorpusCandidate:
    corpus = or_404(selectors.corpus_for_user, user=request.user, key=key, pk=pk)
    _require_edit(request, corpus.decision_type)
    candidate = corpus.candidates.filter(candidate_id=candidate_id).first()
    if candidate is None:
        raise Http404("No such candidate.")
    return candidate


def _candidate_toggle(service: Callable[..., Any], done: str) -> Callable[..., HttpResponse]:
    @require_POST
    def view(request: HttpRequest, key: str, pk: int, candidate_id: str) -> HttpResponse:
        candidate = _candidate(request, key, pk, candidate_id)
        act = lambda: service(actor=request.user, candidate=candidate)  # noqa: E731
        _act(request, act, done, candidate.candidate_id)
        return redirect("scenarios:corpus_detail", key=key, pk=pk)

    return view


candidate_archive = _candidate_toggle(services.candidate_archive, ARCHIVED)
candidate_restore = _candidate_toggle(services.candidate_restore, RESTORED)
