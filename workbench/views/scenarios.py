"""Fixtures, scenarios, runs and the flip review: thin function views.

One template per page; an htmx request gets only the named partial it swaps
(`"scenarios/run.html#progress"`), a plain request the whole page, so every page works
without JavaScript. Reads go through `selectors` (404 without view permission on the decision
type), writes through `services` (403 without the right permission).
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HTMX_STOP_POLLING

from compiler import InvalidInput
from contracts.documents import contract_document
from scenarios import selectors, services
from scenarios.compiling import CorpusInvalid
from scenarios.models import Scenario
from workbench.forms import scenarios as forms

from .helpers import form_errors as _form_errors
from .helpers import page_or_partial
from .helpers import require_edit as _require_edit
from .parameters import int_parameter

# Messages tests assert on.
IMPORTED = "Imported {count} candidates into '{name}'."
CANDIDATE_SAVED = "Saved candidate '{id}'."
WARNING = "Warning: {warning}"
SCENARIO_SAVED = "Saved scenario '{name}'."
EXPECTATIONS_TAKEN = "The expectations of '{name}' are now those of version {number}."
EXPECTATIONS_MOVED = (
    "The result changed since the page was shown, so nothing was saved. "
    "Here is the current result; take it again if it is still what you expect."
)
RUN_QUEUED = "Run {pk} queued: {total} scenario(s) against version {number}."
CANDIDATE_GONE = (
    "Someone else renamed or removed candidate '{id}' since you opened it; nothing was saved. "
    "What you typed is still below: copy it, then add the candidate again if it is needed."
)

# What an edit without its form's lock value is compared as: never current, so a post that
# does not say which revision it was based on is refused (409) rather than saved blindly.
NO_LOCK = -1

DEFAULT_TOP_K = 5

UNSAFE_IN_FILENAME = re.compile(r'[\x00-\x1f\x7f-\x9f"\\/\s]+')


def _template(request: HttpRequest, page: str, partial: str) -> str:
    return page_or_partial(request, f"scenarios/{page}.html", partial)


def _warn(request: HttpRequest, warnings: list[Any]) -> None:
    """Saved, but with values the catalogue or the contract does not know: say where."""
    for warning in warnings:
        messages.warning(request, WARNING.format(warning=warning))


def _lock(value: int | None) -> int:
    """The lock value an edit form posted; a post without one is never current."""
    return NO_LOCK if value is None else value


# --------------------------------------------------------------------------- the suite


@require_GET
def index(request: HttpRequest) -> HttpResponse:
    decision_types = selectors.decision_types_with_counts(user=request.user)
    return render(request, "scenarios/index.html", {"decision_types": decision_types})


@require_GET
def suite(request: HttpRequest, key: str) -> HttpResponse:
    decision_type = selectors.decision_type_for_user(user=request.user, key=key)
    runs = list(selectors.runs(decision_type=decision_type))
    context = {
        "decision_type": decision_type,
        "corpora": selectors.corpora(decision_type=decision_type),
        "scenarios": selectors.scenarios(decision_type=decision_type),
        "runs": runs,
        "any_active": any(run.is_active for run in runs),
        "run_form": forms.RunForm(decision_type=decision_type),
        "can_edit": services.can_edit(request.user, decision_type),
        "can_run": services.can_run(request.user, decision_type),
    }
    return render(request, _template(request, "suite", "runs"), context)


# --------------------------------------------------------------------------- corpora


@require_http_methods(["GET", "POST"])
def corpus_import(request: HttpRequest, key: str) -> HttpResponse:
    decision_type = selectors.decision_type_for_user(user=request.user, key=key)
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
def corpus_detail(request: HttpRequest, key: str, pk: int) -> HttpResponse:
    corpus = selectors.corpus_for_user(user=request.user, key=key, pk=pk)
    context = {
        "decision_type": corpus.decision_type,
        "corpus": corpus,
        "directory_json": json.dumps(corpus.directory, indent=2, ensure_ascii=False),
        "candidates": corpus.candidates.order_by("position", "id"),
        "scenarios": corpus.scenarios.order_by("position", "name"),
        "can_edit": services.can_edit(request.user, corpus.decision_type),
    }
    return render(request, _template(request, "corpus", "candidates"), context)


@require_GET
def corpus_export(request: HttpRequest, key: str, pk: int) -> HttpResponse:
    corpus = selectors.corpus_for_user(user=request.user, key=key, pk=pk)
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
    request: HttpRequest, key: str, pk: int, candidate_id: str | None = None
) -> HttpResponse:
    corpus = selectors.corpus_for_user(user=request.user, key=key, pk=pk)
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


# --------------------------------------------------------------------------- scenarios


def _propositions(decision_type: Any) -> list[str]:
    """The propositions of the version the editor shows: the slots a scenario can expect."""
    version = selectors.version_for(decision_type=decision_type, number=None)
    return [p["key"] for p in contract_document(version)["propositions"]]


@require_http_methods(["GET", "POST"])
def scenario_edit(request: HttpRequest, key: str, pk: int | None = None) -> HttpResponse:
    decision_type = selectors.decision_type_for_user(user=request.user, key=key)
    _require_edit(request, decision_type)
    scenario = (
        selectors.scenario_for_user(user=request.user, key=key, pk=pk) if pk is not None else None
    )
    propositions = _propositions(decision_type)
    if scenario is not None:
        propositions += [k for k in scenario.expected_slots if k not in propositions]
    initial = forms.ScenarioForm.initial_for(scenario) if scenario else {}
    form = forms.ScenarioForm(
        request.POST or None,
        initial=initial,
        decision_type=decision_type,
        propositions=propositions,
    )
    status = 200
    conflict = None
    if request.method == "POST":
        status = 422
        if form.is_valid():
            fields = form.service_fields()
            lock = form.cleaned_data["lock_version"]
            try:
                if scenario is None:
                    scenario = services.scenario_create(
                        actor=request.user,
                        decision_type=decision_type,
                        corpus=form.cleaned_data["corpus"],
                        **fields,
                    )
                else:
                    scenario = services.scenario_update(
                        actor=request.user,
                        scenario=scenario,
                        corpus=form.cleaned_data["corpus"],
                        expected_lock_version=_lock(lock),
                        **fields,
                    )
            except services.EditConflict as exc:
                # Nothing saved; the bound form keeps everything the person typed.
                conflict, status = exc.message, 409
            except ValidationError as exc:
                _form_errors(form, exc)
            else:
                messages.success(request, SCENARIO_SAVED.format(name=scenario.name))
                _warn(request, services.scenario_warnings(scenario))
                return redirect("scenarios:scenario_detail", key=key, pk=scenario.pk)
    context = {
        "decision_type": decision_type,
        "scenario": scenario,
        "form": form,
        "conflict": conflict,
    }
    return render(request, _template(request, "scenario_form", "form"), context, status=status)


def _expectations_token(expectations: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(expectations, sort_keys=True).encode()).hexdigest()


def _scenario_context(request: HttpRequest, scenario: Scenario, number: int | None) -> dict:
    decision_type = scenario.decision_type
    version = selectors.version_for(decision_type=decision_type, number=number)
    context: dict[str, Any] = {
        "decision_type": decision_type,
        "scenario": scenario,
        "version": version,
        "versions": decision_type.versions.order_by("-number"),
        "can_edit": services.can_edit(request.user, decision_type),
        "can_run": services.can_run(request.user, decision_type),
        "preview": None,
        "invalid": None,
    }
    try:
        preview = selectors.expectation_preview(scenario=scenario, version=version)
    except InvalidInput as exc:
        context["invalid"] = exc.errors
    else:
        context["preview"] = preview
        context["view"] = selectors.PacketView(preview.output.to_json())
        context["token"] = _expectations_token(preview.expectations)
    return context


@require_GET
def scenario_detail(request: HttpRequest, key: str, pk: int) -> HttpResponse:
    scenario = selectors.scenario_for_user(user=request.user, key=key, pk=pk)
    context = _scenario_context(request, scenario, int_parameter(request.GET, "version"))
    return render(request, _template(request, "scenario", "result"), context)


@require_POST
def scenario_take_expected(request: HttpRequest, key: str, pk: int) -> HttpResponse:
    scenario = selectors.scenario_for_user(user=request.user, key=key, pk=pk)
    _require_edit(request, scenario.decision_type)
    number = int_parameter(request.POST, "version")
    context = _scenario_context(request, scenario, number)
    preview = context["preview"]
    if preview is None or request.POST.get("token") != context["token"]:
        context["conflict"] = EXPECTATIONS_MOVED
        return render(request, _template(request, "scenario", "result"), context, status=409)
    lock = int_parameter(request.POST, "lock_version")
    try:
        services.scenario_take_expected(
            actor=request.user,
            scenario=scenario,
            expectations=preview.expectations,
            version=preview.version,
            expected_lock_version=_lock(lock),
        )
    except services.EditConflict as exc:
        # The scenario was saved since the page was shown: nothing taken; show it as it is.
        context["conflict"] = exc.message
        return render(request, _template(request, "scenario", "result"), context, status=409)
    taken = EXPECTATIONS_TAKEN.format(name=scenario.name, number=preview.version.number)
    if request.htmx:
        scenario.refresh_from_db()
        context = _scenario_context(request, scenario, number) | {"notice": taken}
        return render(request, "scenarios/scenario.html#result", context)
    messages.success(request, taken)
    url = reverse("scenarios:scenario_detail", kwargs={"key": key, "pk": pk})
    return redirect(f"{url}?version={preview.version.number}")


@require_GET
def scenario_compare(request: HttpRequest, key: str, pk: int) -> HttpResponse:
    scenario = selectors.scenario_for_user(user=request.user, key=key, pk=pk)
    version = selectors.version_for(
        decision_type=scenario.decision_type, number=int_parameter(request.GET, "version")
    )
    top_k = max(1, min(int_parameter(request.GET, "top_k") or DEFAULT_TOP_K, 100))
    context: dict[str, Any] = {
        "decision_type": scenario.decision_type,
        "scenario": scenario,
        "version": version,
        "versions": scenario.decision_type.versions.order_by("-number"),
        "top_k": top_k,
        "comparison": None,
        "invalid": None,
    }
    try:
        context["comparison"] = selectors.comparison(
            scenario=scenario, version=version, top_k=top_k
        )
    except InvalidInput as exc:
        context["invalid"] = exc.errors
    return render(request, _template(request, "compare", "comparison"), context)


# --------------------------------------------------------------------------- runs


@require_POST
def run_start(request: HttpRequest, key: str) -> HttpResponse:
    decision_type = selectors.decision_type_for_user(user=request.user, key=key)
    if not services.can_run(request.user, decision_type):
        raise PermissionDenied(services.NOT_ALLOWED)
    form = forms.RunForm(request.POST, decision_type=decision_type)
    if not form.is_valid():
        messages.error(request, "Choose a version to run against.")
        return redirect("scenarios:suite", key=key)
    version = selectors.version_for(
        decision_type=decision_type, number=form.cleaned_data["version"]
    )
    scenario = None
    if form.cleaned_data.get("scenario"):
        scenario = selectors.scenario_for_user(
            user=request.user, key=key, pk=form.cleaned_data["scenario"]
        )
    try:
        run = services.run_start(actor=request.user, version=version, scenario=scenario)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
        return redirect("scenarios:suite", key=key)
    messages.success(request, RUN_QUEUED.format(pk=run.pk, total=run.total, number=version.number))
    return redirect("scenarios:run_detail", key=key, pk=run.pk)


@require_GET
def run_detail(request: HttpRequest, key: str, pk: int) -> HttpResponse:
    run = selectors.run_for_user(user=request.user, key=key, pk=pk)
    if run.status == run.Status.RUNNING and services.run_requeue_if_stale(run_id=run.pk):
        # Its worker had stopped: the page shows it requeued (or failed).
        run = selectors.run_for_user(user=request.user, key=key, pk=pk)
    partial = request.GET.get("partial", "matrix")
    polling = bool(request.htmx) and partial == "progress"
    only_flips = request.GET.get("flips") == "1"
    matrix = None if run.is_active else selectors.flip_matrix(run=run, only_flips=only_flips)
    if matrix is not None:
        _link_cells(matrix, key)
    context: dict[str, Any] = {
        "decision_type": run.decision_type,
        "run": run,
        "only_flips": only_flips,
        "matrix": matrix,
    }
    template = _template(request, "run", "run" if polling else "matrix")
    # A poll is answered with the whole run section, which polls again only while the run
    # is active; once it is over, 286 also tells htmx to stop, and the result is swapped in
    # once (a page reload per poll never finished for a large matrix).
    status = 200 if run.is_active or not polling else HTMX_STOP_POLLING
    return render(request, template, context, status=status)


def _link_cells(matrix: selectors.Matrix, key: str) -> None:
    """A base cell opens the base's packet, a variant's cell its diff against the base."""
    run_pk = matrix.run.pk
    packet = reverse("scenarios:result_packet", kwargs={"key": key, "run_pk": run_pk, "pk": 0})
    diff = reverse("scenarios:result_diff", kwargs={"key": key, "run_pk": run_pk, "pk": 0})
    # Reversed once with a placeholder: thousands of cells, one reverse() each would show.
    packet_prefix, packet_suffix = packet.rsplit("/0/", 1)
    diff_prefix, diff_suffix = diff.rsplit("/0/", 1)
    for row in matrix.rows:
        pk = row.result.pk
        if row.is_base:
            url = f"{packet_prefix}/{pk}/{packet_suffix}"
        else:
            url = f"{diff_prefix}/{pk}/{diff_suffix}"
        for cell in row.cells:
            cell.url = f"{url}?proposition={cell.proposition}"


@require_GET
def run_report(request: HttpRequest, key: str, pk: int) -> HttpResponse:
    """The run's summary, failures and flips as JSON (what `run_scenarios --json` prints)."""
    run = selectors.run_for_user(user=request.user, key=key, pk=pk)
    return JsonResponse(selectors.run_report(run=run), json_dumps_params={"indent": 2})


@require_GET
def run_coverage(request: HttpRequest, key: str, pk: int) -> HttpResponse:
    run = selectors.run_for_user(user=request.user, key=key, pk=pk)
    matrix = None if run.is_active else selectors.flip_matrix(run=run)
    context = {"decision_type": run.decision_type, "run": run, "matrix": matrix}
    return render(request, _template(request, "coverage", "coverage"), context)


@require_GET
def result_packet(request: HttpRequest, key: str, run_pk: int, pk: int) -> HttpResponse:
    result = selectors.result_for_user(user=request.user, key=key, run_pk=run_pk, pk=pk)
    context = {
        "decision_type": result.run.decision_type,
        "run": result.run,
        "result": result,
        "view": selectors.packet_view(result),
    }
    return render(request, _template(request, "result", "packet"), context)


@require_GET
def result_diff(request: HttpRequest, key: str, run_pk: int, pk: int) -> HttpResponse:
    result = selectors.result_for_user(user=request.user, key=key, run_pk=run_pk, pk=pk)
    diff = selectors.result_diff(result=result, focus=request.GET.get("proposition"))
    context = {"decision_type": result.run.decision_type, "run": result.run, "diff": diff}
    return render(request, _template(request, "diff", "diff"), context)
