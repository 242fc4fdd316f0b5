"""The suite and its runs: the index, the suite page, starting a run, the flip matrix with its
progress, report and coverage, and a result's packet and diff."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HTMX_STOP_POLLING

from scenarios import selectors, services
from workbench import conditional
from workbench.forms import scenarios as forms
from workbench.http import HtmxRequest

from .helpers import found
from .paging import paged
from .scenario_common import _template

# Messages tests assert on.
RUN_QUEUED = "Run {pk} queued: {total} scenario(s) against version {number}."
SHOWN_VERDICTS = ("violation", "finding")


@require_GET
def index(request: HtmxRequest) -> HttpResponse:
    decision_types = selectors.decision_types_with_counts(user=request.user)
    return render(request, "scenarios/index.html", {"decision_types": decision_types})


RUNS_PAGE_SIZE = 20


@require_GET
def suite(request: HtmxRequest, key: str) -> HttpResponse:
    """The suite page: its scenarios (filtered), corpora, archived rows and runs, each list a
    page at a time with its own page parameter. The runs section polls itself while a run is
    active: that request (htmx) reads the runs alone."""
    decision_type = found(selectors.decision_type_for_user, user=request.user, key=key)
    runs = paged(
        request,
        selectors.run_rows(decision_type=decision_type),
        parameter="runs_page",
        per_page=RUNS_PAGE_SIZE,
    )
    context: dict[str, Any] = {
        "decision_type": decision_type,
        "runs": runs,
        "any_active": any(run.is_active for run in runs),
        "run_form": forms.RunForm(decision_type=decision_type),
        "can_edit": services.can_edit(request.user, decision_type),
        "can_run": services.can_run(request.user, decision_type),
    }
    lists: dict[str, Any] = {} if request.htmx else _suite_lists(request, decision_type)
    context |= lists
    if lists and not lists["filters"].active:
        # The unfiltered list's count already says whether there is a scenario to run.
        context["has_scenarios"] = lists["scenarios"].count > 0
    else:
        context["has_scenarios"] = selectors.has_scenarios(decision_type=decision_type)
    return render(request, _template(request, "suite", "runs"), context)


def _suite_lists(request: HtmxRequest, decision_type: Any) -> dict[str, Any]:
    """The suite page's lists but its runs: the scenarios as filtered, the corpora and the
    archived rows."""
    propositions = selectors.proposition_keys(decision_type=decision_type)
    filter_form = forms.ScenarioFilterForm(
        request.GET,
        corpora=selectors.corpus_choices(decision_type=decision_type),
        propositions=propositions,
    )
    chosen = forms.filter_values(filter_form)
    filters = selectors.ScenarioFilter(
        text=chosen["q"],
        corpus=chosen["corpus"],
        proposition=chosen["proposition"],
        verdict=chosen["verdict"],
    )
    scenario_rows = selectors.scenario_rows(
        decision_type=decision_type, filters=filters, propositions=propositions
    )
    counts = selectors.suite_counts(decision_type=decision_type)
    scenarios = paged(request, scenario_rows, count=None if filters.active else counts.scenarios)
    for row in scenarios:
        # Each row's link and day here, not with `{% url %}` and `|date` in the loop.
        row.url = reverse("scenarios:scenario_detail", args=[decision_type.key, row.pk])
        row.day = row.decision_date.isoformat()
    return {
        "filter_form": filter_form,
        "filters": filters,
        "scenarios": scenarios,
        "corpora": paged(
            request,
            selectors.corpora(decision_type=decision_type),
            parameter="corpora_page",
            count=counts.corpora,
        ),
        # Most types archive nothing: no query is even built for an empty list.
        "archived_scenarios": paged(
            request,
            selectors.archived_scenario_rows(decision_type=decision_type)
            if counts.archived_scenarios
            else [],
            parameter="archived_page",
            count=counts.archived_scenarios,
        ),
        "archived_corpora": paged(
            request,
            selectors.archived_corpora(decision_type=decision_type)
            if counts.archived_corpora
            else [],
            parameter="archived_corpora_page",
            count=counts.archived_corpora,
        ),
    }


@require_POST
def run_start(request: HtmxRequest, key: str) -> HttpResponse:
    decision_type = found(selectors.decision_type_for_user, user=request.user, key=key)
    if not services.can_run(request.user, decision_type):
        raise PermissionDenied(services.NOT_ALLOWED)
    form = forms.RunForm(request.POST, decision_type=decision_type)
    if not form.is_valid():
        messages.error(request, "Choose a version to run against.")
        return redirect("scenarios:suite", key=key)
    version = found(
        selectors.version_for, decision_type=decision_type, number=form.cleaned_data["version"]
    )
    scenario = None
    if form.cleaned_data.get("scenario"):
        scenario = found(
            selectors.scenario_for_user,
            user=request.user,
            key=key,
            pk=form.cleaned_data["scenario"],
        )
    try:
        run = services.run_start(actor=request.user, version=version, scenario=scenario)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
        return redirect("scenarios:suite", key=key)
    messages.success(request, RUN_QUEUED.format(pk=run.pk, total=run.total, number=version.number))
    return redirect("scenarios:run_detail", key=key, pk=run.pk)


@require_GET
def run_detail(request: HtmxRequest, key: str, pk: int) -> HttpResponse:
    run = found(conditional.run_read, request, key, pk)
    partial = request.GET.get("partial", "matrix")
    polling = bool(request.htmx) and partial == "progress"
    only_flips = request.GET.get("flips") == "1"
    # Detail rows: bases and the variants with a violation or a finding, unless ?show=all.
    show_all = request.GET.get("show") == "all"
    kinds = None if show_all else SHOWN_VERDICTS
    after = _position(request.GET.get("after"))
    matrix = None
    if not run.is_active:
        matrix = selectors.flip_matrix(run=run, only_flips=only_flips, kinds=kinds, after=after)
    if matrix is not None:
        _link_cells(matrix, key)
    # The next rows (htmx, when the last row is revealed) come as the `rows` partial, which
    # shows no verdict summary (a plain request for them gets the whole page).
    fragment = "rows" if partial == "rows" and matrix is not None else "matrix"
    context: dict[str, Any] = {
        "decision_type": run.decision_type,
        "run": run,
        "only_flips": only_flips,
        "show_all": show_all,
        "matrix": matrix,
        "summary": (
            selectors.verdict_summary(run=run, propositions=matrix.propositions)
            if matrix is not None and not (request.htmx and fragment == "rows")
            else None
        ),
        **_row_links(request, matrix),
    }
    template = _template(request, "run", "run" if polling else fragment)
    # A poll is answered with the whole run section, which polls again only while the run
    # is active; once it is over, 286 also tells htmx to stop, and the result is swapped in
    # once (a page reload per poll never finished for a large matrix). Reading a run never
    # changes it: a run whose worker stopped is recovered by the workers' stale-work check.
    status = 200 if run.is_active or not polling else HTMX_STOP_POLLING
    return render(request, template, context, status=status)


def _position(value: str | None) -> int | None:
    """The `?after=` of the matrix's rows (a row's position); anything else: from the first."""
    return int(value) if value and value.isdigit() else None


def _row_links(request: HtmxRequest, matrix: selectors.Matrix | None) -> dict[str, str]:
    """The URLs of the first rows, of the next rows (other parameters kept) and of the next
    rows alone (what the lazy-loading row fetches)."""
    if matrix is None:
        return {}

    def url(after: int | None, **extra: str) -> str:
        query = request.GET.copy()
        for name in ("partial", "after", "page"):
            query.pop(name, None)
        if after is not None:
            query["after"] = str(after)
        query.update(extra)
        return f"{request.path}?{query.urlencode()}" if query else request.path

    links = {}
    if matrix.after is not None:
        links["first_url"] = url(None)
    if matrix.next_after is not None:
        links["next_url"] = url(matrix.next_after)
        links["next_rows_url"] = url(matrix.next_after, partial="rows")
    return links


def _link_cells(matrix: selectors.Matrix, key: str) -> None:
    """A base row opens the base's packet, a variant's its diff against the base; a cell that
    says more than its state opens the same, focused on its proposition."""
    run_pk = matrix.run.pk
    packet = reverse("scenarios:result_packet", kwargs={"key": key, "run_pk": run_pk, "pk": 0})
    diff = reverse("scenarios:result_diff", kwargs={"key": key, "run_pk": run_pk, "pk": 0})
    # Reversed once with a placeholder, not once a row.
    packet_prefix, packet_suffix = packet.rsplit("/0/", 1)
    diff_prefix, diff_suffix = diff.rsplit("/0/", 1)
    for row in matrix.rows:
        pk = row.result.pk
        if row.is_base:
            row.url = f"{packet_prefix}/{pk}/{packet_suffix}"
        else:
            row.url = f"{diff_prefix}/{pk}/{diff_suffix}"
        for cell in row.cells:
            if cell.marked:
                cell.url = f"{row.url}?proposition={cell.proposition}"


@require_GET
def run_report(request: HtmxRequest, key: str, pk: int) -> StreamingHttpResponse:
    """The run's summary, failures and flips as JSON (what `run_scenarios --json` prints)."""
    run = found(selectors.run_for_user, user=request.user, key=key, pk=pk)
    # Streamed: a large run's report is written as its rows are read.
    return StreamingHttpResponse(
        selectors.run_report_stream(run=run), content_type="application/json"
    )


@require_GET
def run_coverage(request: HtmxRequest, key: str, pk: int) -> HttpResponse:
    run = found(selectors.run_for_user, user=request.user, key=key, pk=pk)
    matrix = None if run.is_active else selectors.coverage_matrix(run=run)
    context = {
        "decision_type": run.decision_type,
        "run": run,
        "matrix": matrix,
        # What the corpora say about the contract, without compiling (docs/verdicts.md).
        "corpus_findings": selectors.run_corpus_findings(run=run) if matrix is not None else [],
    }
    return render(request, _template(request, "coverage", "coverage"), context)


@require_GET
def result_packet(request: HtmxRequest, key: str, run_pk: int, pk: int) -> HttpResponse:
    result = found(selectors.result_for_user, user=request.user, key=key, run_pk=run_pk, pk=pk)
    context = {
        "decision_type": result.run.decision_type,
        "run": result.run,
        "result": result,
        "view": selectors.packet_view(result),
    }
    return render(request, _template(request, "result", "packet"), context)


@require_GET
def result_diff(request: HtmxRequest, key: str, run_pk: int, pk: int) -> HttpResponse:
    result = found(selectors.result_for_user, user=request.user, key=key, run_pk=run_pk, pk=pk)
    diff = selectors.result_diff(result=result, focus=request.GET.get("proposition"))
    context = {"decision_type": result.run.decision_type, "run": result.run, "diff": diff}
    return render(request, _template(request, "diff", "diff"), context)
