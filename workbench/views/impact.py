"""The impact report in the browser: its page (`version_impact`, which polls while the
worker computes the report), an owner's justification of a violation (`version_justify`) and
asking again for a report that failed for good (`version_impact_retry`). The review card
around it is `review.py`'s.

The page prints the report's head (verdicts, widenings, per proposition, contract changes)
and one page of its scenarios, read from their rows and filtered in the database (by
proposition, by kind of change); htmx swaps the next page in (`?part=scenarios`), and brings
a scenario's every compile (`?part=compiles`) and the new findings (`?part=findings`) as
they are opened. The
report's inputs are hashed once per request (`impact.hashed_once`)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HTMX_STOP_POLLING

from contracts import selectors, services
from contracts.documents import ContractInvalid
from contracts.models import ContractVersion
from publishing import impact, review
from publishing.replay import may_replay, recorded_decisions
from workbench import conditional
from workbench.forms.review import JustifyForm
from workbench.http import HtmxRequest

from .helpers import found
from .paging import paged
from .parameters import int_parameter
from .review import decide_context, report_waiting, require_role

JUSTIFIED = "Justification recorded: the reviewer reads it next to the violation."
REPORT_ASKED_AGAIN = "The impact report of version {number} is being computed again."


@require_GET
def version_impact(request: HtmxRequest, key: str, number: int) -> HttpResponse:
    """The impact report: what a reviewer reads before deciding (anyone who can see the type
    may read it; only a reviewer gets the approve button under it)."""
    version = found(conditional.version_read, request, key, number)
    return _render_impact(request, version)


def _render_impact(
    request: HtmxRequest, version: ContractVersion, *, errors: list[str] | None = None
) -> HttpResponse:
    with impact.hashed_once():
        return _render_impact_once(request, version, errors=errors)


def _render_impact_once(
    request: HtmxRequest, version: ContractVersion, *, errors: list[str] | None
) -> HttpResponse:
    try:
        report = review.report_for(version)
        problems: list[str] = []
    except ContractInvalid as exc:
        report, problems = None, [f"{p.where}: {p.msg}" for p in exc.problems]
    part = request.GET.get("part") if request.htmx else None
    base: dict[str, Any] = {"decision_type": version.decision_type, "version": version}
    if part == "findings" and report is not None:
        # The new findings, asked for as their list is opened (no scenario read).
        return render(request, "contracts/impact.html#findings", {**base, "report": report})
    shown = _scenarios_page(request, report)
    if part == "compiles" and shown["scenarios_page"]:
        # One scenario's every compile that changes, asked for as its reader opens it.
        opened = [s for s in shown["scenarios_shown"] if s["compiles_shown"]]
        return render(
            request,
            "contracts/impact.html#compiles",
            {**base, "scenario": opened[0]} if opened else base,
        )
    if part == "scenarios":
        # Another page of scenarios (or another filter): the list alone, nothing else read.
        return render(request, "contracts/impact.html#scenarios", {**base, **shown})
    # No request compiles the report: while the worker computes it the page says so (and
    # what the report is doing) and polls; the answer that brings the report, or its
    # failure, stops the polling (286).
    waiting, failed = report_waiting(version) if report is None and not problems else ("", "")
    context = {
        **decide_context(request, version, errors=errors),
        "report": report,
        **shown,
        "problems": problems,
        "findings_shown": request.GET.get("findings") == "1",
        "recorded_decisions": _recorded_decisions(request, version),
        "can_replay": may_replay(request.user, version),
        "can_justify": version.is_editable
        and review.permitted(request.user, version, review.SUBMIT),
        "pending": review.REPORT_PENDING.format(number=version.number) if waiting else "",
        "report_state": waiting,
        "failed": failed,
        "can_retry": bool(failed) and _may_retry(request, version),
    }
    template = "contracts/impact.html" + ("#report" if request.htmx else "")
    status = 422 if errors or problems else 200
    if request.htmx and request.GET.get("poll") and not waiting:
        status = HTMX_STOP_POLLING
    return render(request, template, context, status=status)


def _scenarios_page(request: HtmxRequest, report: impact.ImpactReport | None) -> dict[str, Any]:
    """One page of the report's scenarios, as the query string filters them."""
    if report is None or report.stored_id is None:
        return {"scenarios_page": None}
    proposition = request.GET.get("proposition", "").strip()
    kind = request.GET.get("kind", "")
    changed_only = request.GET.get("changed") == "1"
    try:
        number = max(1, int(request.GET.get("page", "1")))
    except ValueError:
        number = 1
    opened = int_parameter(request.GET, "compiles")
    page = impact.entries_page(
        report.stored_id,
        number=number,
        proposition=proposition,
        kind=kind,
        changed_only=changed_only,
        total=report.summary["scenarios"],
        whole=opened,
    )
    filters = {"proposition": proposition, "kind": kind if kind in impact.CHANGE_KINDS else ""}
    if changed_only:
        filters["changed"] = "1"
    kept = {name: value for name, value in filters.items() if value}
    shown = impact.scenarios_shown(page.entries, compiles=opened)
    for index, scenario in enumerate(shown, start=1):
        scenario["compiles_query"] = urlencode({**kept, "page": page.number, "compiles": index})
        scenario["index"] = index
    return {
        "scenarios_page": page,
        "scenarios_shown": shown,
        "scenario_filters": filters,
        "change_kinds": impact.CHANGE_KINDS,
        "next_query": urlencode({**kept, "page": page.number + 1}) if page.has_next else "",
        "previous_query": urlencode({**kept, "page": page.number - 1}) if page.number > 1 else "",
    }


@require_POST
def version_justify(request: HtmxRequest, key: str, number: int) -> HttpResponse:
    """An owner records why a violation of the impact report is acceptable."""
    version = found(selectors.version_for_user, user=request.user, key=key, number=number)
    require_role(request, version, review.SUBMIT)
    form = JustifyForm(request.POST)
    if not form.is_valid():
        errors = [f"{name}: {' '.join(map(str, e))}" for name, e in form.errors.items()]
        return _render_impact(request, version, errors=errors)
    try:
        review.violation_justify(actor=request.user, version=version, **form.cleaned_data)
    except ValidationError as error:
        return _render_impact(request, version, errors=error.messages)
    messages.success(request, JUSTIFIED)
    return redirect(reverse("version_impact", kwargs={"key": key, "number": number}))


def _may_retry(request: HtmxRequest, version: ContractVersion) -> bool:
    """Who waits on the report may ask for it again: its owners and its reviewers."""
    return any(review.permitted(request.user, version, a) for a in (review.SUBMIT, review.APPROVE))


@require_POST
def version_impact_retry(request: HtmxRequest, key: str, number: int) -> HttpResponse:
    """Compute again a report that failed for good (`review.report_retry`)."""
    version = found(selectors.version_for_user, user=request.user, key=key, number=number)
    if not _may_retry(request, version):
        raise PermissionDenied(services.NOT_ALLOWED)
    try:
        review.report_retry(actor=request.user, version=version)
    except ValidationError as error:
        return _render_impact(request, version, errors=error.messages)
    messages.success(request, REPORT_ASKED_AGAIN.format(number=number))
    return redirect(reverse("version_impact", kwargs={"key": key, "number": number}))


RECORDED_DECISIONS_PAGE = 20


def _recorded_decisions(request: HtmxRequest, version: ContractVersion) -> dict:
    """The "Recorded decisions" section, its changed decisions a page at a time
    (`?decisions_page=N`)."""
    shown = recorded_decisions(version)
    shown["changed"] = paged(
        request, shown["changed"], parameter="decisions_page", per_page=RECORDED_DECISIONS_PAGE
    )
    return shown
