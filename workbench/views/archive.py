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


@require_POST
def scenario_archive(request: HttpRequest, key: str, pk: int) -> HttpResponse:
    scenario = selectors.scenario_for_user(user=request.user, key=key, pk=pk)
    _require_edit(request, scenario.decision_type)
    act = lambda: services.scenario_archive(actor=request.user, scenario=scenario)  # noqa: E731
    _act(request, act, ARCHIVED, scenario.name)
    return redirect("scenarios:suite", key=key)


@require_POST
def scenario_restore(request: HttpRequest, key: str, pk: int) -> HttpResponse:
    scenario = selectors.scenario_for_user(user=request.user, key=key, pk=pk)
    _require_edit(request, scenario.decision_type)
    act = lambda: services.scenario_restore(actor=request.user, scenario=scenario)  # noqa: E731
    _act(request, act, RESTORED, scenario.name)
    return redirect("scenarios:suite", key=key)


@require_POST
def scenario_clone(request: HttpRequest, key: str, pk: int) -> HttpResponse:
    scenario = selectors.scenario_for_user(user=request.user, key=key, pk=pk)
    _require_edit(request, scenario.decision_type)
    try:
        copy = services.scenario_clone(actor=request.user, scenario=scenario)
    except ValidationError as error:
        for message in error.messages:
            messages.error(request, message)
        return redirect("scenarios:scenario_detail", key=key, pk=pk)
    messages.success(request, CLONED.format(name=copy.name))
    return redirect("scenarios:scenario_edit", key=key, pk=copy.pk)


@require_POST
def corpus_archive(request: HttpRequest, key: str, pk: int) -> HttpResponse:
    corpus = selectors.corpus_for_user(user=request.user, key=key, pk=pk)
    _require_edit(request, corpus.decision_type)
    act = lambda: services.corpus_archive(actor=request.user, corpus=corpus)  # noqa: E731
    if _act(request, act, ARCHIVED, corpus.name):
        return redirect("scenarios:suite", key=key)
    return redirect("scenarios:corpus_detail", key=key, pk=pk)


@require_POST
def corpus_restore(request: HttpRequest, key: str, pk: int) -> HttpResponse:
    corpus = selectors.corpus_for_user(user=request.user, key=key, pk=pk)
    _require_edit(request, corpus.decision_type)
    act = lambda: services.corpus_restore(actor=request.user, corpus=corpus)  # noqa: E731
    _act(request, act, RESTORED, corpus.name)
    return redirect("scenarios:suite", key=key)


def _candidate(request: HttpRequest, key: str, pk: int, candidate_id: str) -> CorpusCandidate:
    corpus = selectors.corpus_for_user(user=request.user, key=key, pk=pk)
    _require_edit(request, corpus.decision_type)
    candidate = corpus.candidates.filter(candidate_id=candidate_id).first()
    if candidate is None:
        raise Http404("No such candidate.")
    return candidate


@require_POST
def candidate_archive(request: HttpRequest, key: str, pk: int, candidate_id: str) -> HttpResponse:
    candidate = _candidate(request, key, pk, candidate_id)
    act = lambda: services.candidate_archive(actor=request.user, candidate=candidate)  # noqa: E731
    _act(request, act, ARCHIVED, candidate.candidate_id)
    return redirect("scenarios:corpus_detail", key=key, pk=pk)


@require_POST
def candidate_restore(request: HttpRequest, key: str, pk: int, candidate_id: str) -> HttpResponse:
    candidate = _candidate(request, key, pk, candidate_id)
    act = lambda: services.candidate_restore(actor=request.user, candidate=candidate)  # noqa: E731
    _act(request, act, RESTORED, candidate.candidate_id)
    return redirect("scenarios:corpus_detail", key=key, pk=pk)
