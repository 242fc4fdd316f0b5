"""Corpora: import, the corpus page, its export, and one candidate's form."""

from __future__ import annotations

import json
import re

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_GET, require_http_methods

from scenarios import selectors, services
from scenarios.compiling import CorpusInvalid
from workbench.forms import scenarios as forms
from workbench.http import HtmxRequest

from .helpers import form_errors as _form_errors
from .helpers import found
from .helpers import require_edit as _require_edit
from .paging import paged
from .scenario_common import _lock, _template, _warn

# Messages tests assert on.
IMPORTED = "Imported {count} candidates into '{name}'."
CANDIDATE_SAVED = "Saved candidate '{id}'."
CANDIDATE_GONE = (
    "Someone else renamed or removed candidate '{id}' since you opened it; nothing was saved. "
    "What you typed is still below: copy it, then add the candidate again if it is needed."
)

UNSAFE_IN_FILENAME = re.compile(r'[\x00-\x1f\x7f-\x9f"\\/\s]+')


@require_http_methods(["GET", "POST"])
def corpus_import(request: HtmxRequest, key: str) -> HttpResponse:
    decision_type = found(selectors.decision_type_for_user, user=request.user, key=key)
    _require_edit(request, decision_type)
    problems = []
    status = 200
    form = forms.ImportForm(request.POST or None, request.FILES or None)
    if request.method == "POST":
        if form.is_valid():
            try:
                corpus = services.corpus_import(
                    actor=request.user,
                    decision_type=decision_type,
                    name=form.cleaned_data["name"],
                    description=form.cleaned_data["description"],
                    document=form.cleaned_data["document"],
                    replace=form.cleaned_data["replace"],
                    strict=form.cleaned_data["strict"],
                )
            except CorpusInvalid as exc:
                problems = exc.problems
            except ValidationError as exc:
                _form_errors(form, exc)
            else:
                messages.success(
                    request,
                    IMPORTED.format(count=corpus.candidates.count(), name=corpus.name),
                )
                _warn(request, corpus.warnings)
                return redirect("scenarios:corpus_detail", key=key, pk=corpus.pk)
        status = 422
    context = {"decision_type": decision_type, "form": form, "problems": problems}
    return render(request, _template(request, "corpus_import", "import"), context, status=status)


@require_GET
def corpus_detail(request: HtmxRequest, key: str, pk: int) -> HttpResponse:
    """The corpus page: its live candidates a page at a time (narrowed by id and class), its
    archived ones, its directory and how many live scenarios use it."""
    corpus = found(selectors.corpus_for_user, user=request.user, key=key, pk=pk)
    filter_form = forms.CandidateFilterForm(request.GET)
    chosen = forms.filter_values(filter_form)
    candidates = selectors.candidate_rows(
        corpus_id=corpus.pk, text=chosen["q"], evidence_class=chosen["evidence_class"]
    )
    context = {
        "decision_type": corpus.decision_type,
        "corpus": corpus,
        "directory_json": json.dumps(corpus.directory, indent=2, ensure_ascii=False),
        "filter_form": filter_form,
        "filtered": bool(chosen["q"] or chosen["evidence_class"]),
        "candidates": paged(request, candidates),
        "archived_candidates": paged(
            request,
            selectors.archived_candidate_rows(corpus_id=corpus.pk),
            parameter="archived_page",
        ),
        "used_by": corpus.scenarios.live().count(),
        "can_edit": services.can_edit(request.user, corpus.decision_type),
    }
    return render(request, _template(request, "corpus", "candidates"), context)


@require_GET
def corpus_export(request: HtmxRequest, key: str, pk: int) -> HttpResponse:
    corpus = found(selectors.corpus_for_user, user=request.user, key=key, pk=pk)
    response = JsonResponse(selectors.corpus_export(corpus=corpus), json_dumps_params={"indent": 2})
    response["Content-Disposition"] = content_disposition_header(
        True, _download_name(f"{corpus.decision_type.key}-{corpus.name}.json")
    )
    return response


def _download_name(name: str) -> str:
    """A file name any browser keeps: control characters, quotes, slashes and spaces become
    "-" (a name stored before names were checked may hold a line break); Unicode stays and
    travels as RFC 6266 `filename*`."""
    return UNSAFE_IN_FILENAME.sub("-", name)


@require_http_methods(["GET", "POST"])
def candidate_edit(
    request: HtmxRequest, key: str, pk: int, candidate_id: str | None = None
) -> HttpResponse:
    corpus = found(selectors.corpus_for_user, user=request.user, key=key, pk=pk)
    _require_edit(request, corpus.decision_type)
    known = selectors.known_values(decision_type=corpus.decision_type, corpus=corpus)
    existing = None
    if candidate_id is not None:
        existing = corpus.candidates.filter(candidate_id=candidate_id).first()
        if existing is None and request.method != "POST":
            raise Http404("No such candidate.")
    status = 200
    conflict = None
    if request.method == "POST":
        form = forms.CandidateForm(request.POST, known=known)
        status = 422
        if candidate_id is not None and existing is None:
            # Renamed or removed while this form was open: keep what was typed on the page.
            conflict, status = CANDIDATE_GONE.format(id=candidate_id), 409
        elif form.is_valid():
            lock = form.cleaned_data["lock_version"]
            try:
                saved = services.candidate_save(
                    actor=request.user,
                    corpus=corpus,
                    data=form.candidate(),
                    original_id=candidate_id,
                    # An added candidate has no revision to compare with.
                    expected_lock_version=None if existing is None else _lock(lock),
                )
            except services.EditConflict as exc:
                # Nothing saved; the bound form keeps everything the person typed.
                conflict, status = exc.message, 409
            except ValidationError as exc:
                _form_errors(form, exc, fallback="other")
            else:
                messages.success(request, CANDIDATE_SAVED.format(id=saved.candidate_id))
                _warn(request, saved.warnings)
                return redirect("scenarios:corpus_detail", key=key, pk=corpus.pk)
    else:
        form = forms.CandidateForm.for_candidate(existing, known=known)
    context = {
        "decision_type": corpus.decision_type,
        "corpus": corpus,
        "form": form,
        "candidate_id": candidate_id,
        "conflict": conflict,
    }
    return render(request, _template(request, "candidate_form", "form"), context, status=status)
