"""The impact report in the browser: its page (`version_impact`, which polls while the
worker computes the report), an owner's justification of a violation (`version_justify`) and
asking again for a report that failed for good (`version_impact_retry`). The review card
around it is `review.py`'s."""

from __future__ import annotations

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
from publishing import review
from publishing.replay import may_replay, recorded_decisions
from workbench.forms.review import JustifyForm
from workbench.http import HtmxRequest

from .helpers import found
from .paging import paged
from .review import report_waiting, require_role, review_context

JUSTIFIED = "Justification recorded: the reviewer reads it next to the violation."
REPORT_ASKED_AGAIN = "The impact report of version {number} is being computed again."


@require_GET
def version_impact(request: HtmxRequest, key: str, number: int) -> HttpResponse:
    """The impact report: what a reviewer reads before deciding (anyone who can see the type
    may read it; only a reviewer gets the approve button under it)."""
    version = found(selectors.version_for_user, user=request.user, key=key, number=number)
    return _render_impact(request, version)


def _render_impact(
    request: HtmxRequest, version: ContractVersion, *, errors: list[str] | None = None
) -> HttpResponse:
    try:
        report = review.report_for(version)
        problems: list[str] = []
    except ContractInvalid as exc:
        report, problems = None, [f"{p.where}: {p.msg}" for p in exc.problems]
    # No request compiles the report: while the worker computes it the page says so (and
    # what the report is doing) and polls; the answer that brings the report, or its
    # failure, stops the polling (286).
    waiting, failed = report_waiting(version) if report is None and not problems else ("", "")
    context = {
        **review_context(request, version, errors=errors),
        "report": report,
        "problems": problems,
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
