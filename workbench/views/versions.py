"""A decision type's versions in the browser: the version history, the structural diff of
any two versions and starting the next draft."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import DatabaseError
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from contracts import selectors, services
from contracts.documents import contract_document
from publishing import review
from publishing.impact import contract_changes
from workbench.http import HtmxRequest

from .helpers import found
from .paging import paged
from .parameters import int_parameter
from .review import LOST_RACE, lost_race

# Messages tests assert on.
DRAFT_STARTED = "Started version {number} as a draft, copied from version {parent}."
BAD_DIFF = "Choose two versions of this decision type to compare."


@require_GET
def decision_type_versions(request: HtmxRequest, key: str) -> HttpResponse:
    """The version history a page at a time, newest first; each row loads the fields it shows,
    not the version's contract."""
    decision_type = found(selectors.decision_type_for_user, user=request.user, key=key)
    versions = paged(
        request,
        decision_type.versions.select_related("created_by", "parent")
        .only(
            "pk",
            "number",
            "status",
            "sha256",
            "created_at",
            "decision_type_id",
            "created_by__username",
            "parent__number",
        )  # fmt: skip
        .order_by("-number"),
    )
    for version in versions:
        # shown_status reads the type of an approved version: it is this page's.
        version.decision_type = decision_type
    bundles = review.bundles_by_version(decision_type, [v.pk for v in versions])
    rows = [
        {"version": v, "bundle": bundles.get(v.pk), "status": review.shown_status(v)}
        for v in versions
    ]
    numbers = list(decision_type.versions.order_by("-number").values_list("number", flat=True))
    return render(
        request,
        "contracts/versions.html",
        {"decision_type": decision_type, "rows": rows, "listing": versions, "numbers": numbers},
    )


@require_GET
def version_diff(request: HtmxRequest, key: str) -> HttpResponse:
    """The structural diff between any two versions (`?from=N&to=M`; by default the latest
    version against the one it was started from)."""
    decision_type = found(selectors.decision_type_for_user, user=request.user, key=key)
    versions = list(decision_type.versions.order_by("-number"))
    by_number = {v.number: v for v in versions}
    to_number, from_number = int_parameter(request.GET, "to"), int_parameter(request.GET, "from")
    try:
        newer = by_number[to_number] if to_number is not None else versions[0]
        older = (
            by_number[from_number]
            if from_number is not None
            else (newer.parent or next((v for v in versions if v.number < newer.number), None))
        )
    except (KeyError, IndexError):
        raise Http404(BAD_DIFF) from None
    changes: list[dict[str, Any]] = []
    if older is not None and newer is not None:
        changes = contract_changes(contract_document(older), contract_document(newer))
    context = {
        "decision_type": decision_type,
        "versions": versions,
        "older": older,
        "newer": newer,
        "changes": changes,
        "older_document": contract_document(older) if older else None,
        "newer_document": contract_document(newer) if newer else None,
    }
    template = "contracts/diff.html" + ("#diff" if request.htmx else "")
    return render(request, template, context)


@require_POST
def version_start_draft(request: HtmxRequest, key: str) -> HttpResponse:
    """The way to change a frozen (published, superseded, retired) contract: a new draft
    copied from the latest version. Refused, with the reason, while a version is open."""
    decision_type = found(selectors.decision_type_for_user, user=request.user, key=key)
    if not selectors.can_edit(user=request.user, decision_type=decision_type):
        raise PermissionDenied(services.NOT_ALLOWED)
    try:
        version = services.version_start_draft(actor=request.user, decision_type=decision_type)
    except DatabaseError as error:
        if not lost_race(error):
            raise
        return HttpResponse(LOST_RACE, status=409, content_type="text/plain; charset=utf-8")
    except ValidationError as error:
        for message in error.messages:
            messages.error(request, message)
        return redirect("decision_type_detail", key=key)
    parent = version.parent.number if version.parent else "nothing"
    messages.success(request, DRAFT_STARTED.format(number=version.number, parent=parent))
    return redirect("version_detail", key=key, number=version.number)
