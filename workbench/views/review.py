"""Review and publishing in the browser: the review card with its transition buttons. (The
impact report's page, justifications and asking for it again are `impact.py`; version
history, diffs and new drafts are `versions.py`; signing keys and bundle downloads are
`keys.py`.)

Each button posts to one view that parses the form and calls the matching action in
`publishing.review`; the action checks permission and state. The views ask the same action's
permission first (`review.permitted`), so that a person without it gets 403 before any form is
read; which buttons show is `review.available_actions`. An htmx request gets the `review`
partial of `contracts/review.html` back; a plain POST redirects to the page.
"""

from __future__ import annotations

import contextlib
import shlex
from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import DatabaseError, IntegrityError
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import trigger_client_event

from compiler_trust import KEY_SET_FILE
from contracts import selectors, services
from contracts.documents import ContractInvalid
from contracts.models import Approval, Bundle, ContractVersion
from publishing import impact, review, signing
from workbench.forms import LockForm
from workbench.forms.review import (
    ApproveForm,
    PublishForm,
    RequestChangesForm,
    RetireForm,
)
from workbench.http import HtmxRequest

from .helpers import CHANGED_EVENT, found
from .keys import KEY_CREATED  # noqa: F401 - its old home; tests read it as review_views.X
from .statements import report_or_none, statements_to_sign

REVIEW_TEMPLATE = "contracts/review.html"

# Messages tests assert on.
SUBMITTED = "Version {number} is in review."
APPROVED = "You approved version {number}."
CHANGES_REQUESTED = "Version {number} went back to its owner."
PUBLISHED = "Version {number} is published; its bundle is {sha256}."
RETIRED = "Version {number} is retired."
WITHDRAWN = "Version {number} is a draft again; its approvals were voided."
LOST_RACE = (
    "Someone else acted on this version at the same moment, so nothing was done. "
    "Here is where it stands now; decide again."
)


def lost_race(error: DatabaseError) -> bool:
    """A constraint another transaction got to first, or PostgreSQL breaking a deadlock or a
    serialization failure: the person lost a race (409), the server did not fail (500)."""
    if isinstance(error, IntegrityError):
        return True
    sqlstate = getattr(error.__cause__, "sqlstate", None)
    return sqlstate in ("40001", "40P01")


# --------------------------------------------------------------------------- context


def require_role(request: HtmxRequest, version: ContractVersion, action: str) -> None:
    """The action's own role (`review.ACTIONS`), asked before any form is read."""
    if not review.permitted(request.user, version, action):
        raise PermissionDenied(services.NOT_ALLOWED)


def _verify_command(bundle: Bundle | None) -> str:
    """The command the page prints to verify the bundle offline, verbatim: run in the folder
    holding the downloaded bundle and keys.json (tests run it exactly as printed)."""
    if bundle is None:
        return ""
    bundle_file = shlex.quote(bundle.filename)
    return f"python -m compiler_tools verify-bundle {bundle_file} --public-key {KEY_SET_FILE}"


def _signatures(bundle: Bundle | None) -> list[dict[str, Any]]:
    if bundle is None:
        return []
    return list(bundle.document["signatures"])


def decide_context(
    request: HtmxRequest,
    version: ContractVersion,
    *,
    errors: list[str] | None = None,
    changes_form: RequestChangesForm | None = None,
) -> dict[str, Any]:
    """What the card's `notices` and `decide` parts print (the impact page shows those
    two): the actions, why any is blocked, the report to approve with or what it is doing,
    and the statement a reviewer signs."""
    user = request.user
    actions = review.available_actions(user, version)
    # Anyone reading a version under review sees its causes and the owner's justifications,
    # not only a reviewer who may approve it now (one without a key yet reads them first).
    under_review = version.status in (
        ContractVersion.Status.IN_REVIEW,
        ContractVersion.Status.APPROVED,
    )
    report = report_or_none(version) if under_review or actions[review.APPROVE].allowed else None
    report_state = report_failed = ""
    if actions[review.APPROVE].allowed and report is None:
        with contextlib.suppress(ContractInvalid):  # the page says what is wrong instead
            report_state, report_failed = report_waiting(version)
    return {
        "decision_type": version.decision_type,
        "version": version,
        "actions": actions,
        "blocked": [a for a in actions.values() if a.blocked],
        "warnings": _warnings(version),
        "report": report,
        "report_state": report_state,
        "report_failed": report_failed,
        **statements_to_sign(user, version, actions),
        "errors": errors or [],
        "changes_form": changes_form or RequestChangesForm(),
    }


def review_context(
    request: HtmxRequest,
    version: ContractVersion,
    *,
    errors: list[str] | None = None,
    changes_form: RequestChangesForm | None = None,
) -> dict[str, Any]:
    """The whole review card: `decide_context`, the reviews and approvals so far, the
    bundle once published, and whether the person still needs a signing key."""
    user = request.user
    context = decide_context(request, version, errors=errors, changes_form=changes_form)
    can_review = selectors.can_review(user=user, decision_type=version.decision_type)
    bundle = review.version_bundle(version)
    approvals = review.version_approvals(version)
    status, status_label = review.shown_status(version)
    counting: list[Approval] = []
    not_counting = ""
    if version.status == ContractVersion.Status.APPROVED:
        counting, not_counting = review.counting_approvals(version)
    counting_ids = {a.pk for a in counting}
    return {
        **context,
        "shown_status": status,
        "shown_status_label": status_label,
        "active_review": review.open_review(version),
        "reviews": version.reviews.select_related("submitted_by", "closed_by"),
        "approvals": [
            {
                "approval": a,
                "counts": a.pk in counting_ids,
                "not_counting": not_counting
                if a.voided_at is None and a.pk not in counting_ids
                else "",
            }
            for a in approvals
        ],
        "counting": counting,
        "bundle": bundle,
        "signatures": _signatures(bundle),
        "verify_command": _verify_command(bundle),
        "is_author": user.pk in review.authors(version),
        "reviewer_needs_key": can_review and signing.signing_key(user) is None,
    }


def _warnings(version: ContractVersion) -> list[str]:
    """Shown to everyone reading a version on its way to publication (not once published)."""
    if version.status in ContractVersion.OPEN_STATUSES:
        return review.review_warnings(version)
    return []


def _render_review(
    request: HtmxRequest, version: ContractVersion, *, status: int = 200, **extra: Any
) -> HttpResponse:
    version.refresh_from_db()
    # Rendered after any action is done: nothing changes the report's inputs from here on,
    # so they are hashed once however many parts of the card look at the report.
    with impact.hashed_once():
        context = review_context(request, version, **extra)
        template = f"{REVIEW_TEMPLATE}#review" if request.htmx else REVIEW_TEMPLATE
        return render(request, template, context, status=status)


def _review_url(version: ContractVersion) -> str:
    return reverse(
        "version_review", kwargs={"key": version.decision_type.key, "number": version.number}
    )


def _transition[Result](
    request: HtmxRequest,
    key: str,
    number: int,
    *,
    action: str,
    form_class: type[forms.Form] | None,
    act: Callable[[ContractVersion, dict[str, Any]], Result],
    done: Callable[[ContractVersion, Result], str],
) -> HttpResponse:
    """Permission, form, action, answer: the shape of every button."""
    version = found(selectors.version_for_user, user=request.user, key=key, number=number)
    require_role(request, version, action)
    form = form_class(request.POST) if form_class is not None else None
    if form is not None and not form.is_valid():
        errors = [f"{name}: {' '.join(map(str, e))}" for name, e in form.errors.items()]
        extra: dict[str, Any] = {"errors": errors}
        if isinstance(form, RequestChangesForm):
            extra["changes_form"] = form
        return _render_review(request, version, status=422, **extra)
    data = form.cleaned_data if form is not None else {}
    try:
        result = act(version, data)
    except services.EditConflict as conflict:
        return _render_review(request, version, status=409, errors=[conflict.message])
    except DatabaseError as error:
        if not lost_race(error):
            raise
        return _render_review(request, version, status=409, errors=[LOST_RACE])
    except ValidationError as error:
        return _render_review(request, version, status=422, errors=error.messages)
    messages.success(request, done(version, result))
    if not request.htmx:
        return redirect(_review_url(version))
    response = _render_review(request, version)
    trigger_client_event(response, CHANGED_EVENT)
    return response


# --------------------------------------------------------------------------- pages


@require_GET
def version_review(request: HtmxRequest, key: str, number: int) -> HttpResponse:
    version = found(selectors.version_for_user, user=request.user, key=key, number=number)
    return _render_review(request, version)


def report_waiting(version: ContractVersion) -> tuple[str, str]:
    """What the report not stored yet is doing, or why it failed for good: one of the two."""
    stored = review.stored_report(version)
    if stored.status == stored.Status.FAILED:
        return "", review.REPORT_FAILED.format(number=version.number, error=stored.error)
    pending = review.REPORT_PENDING.format(number=version.number)
    return review.report_state(stored) or pending, ""


# --------------------------------------------------------------------------- transitions


@require_POST
def version_submit(request: HtmxRequest, key: str, number: int) -> HttpResponse:
    return _transition(
        request,
        key,
        number,
        action=review.SUBMIT,
        form_class=LockForm,
        act=lambda version, data: review.version_submit(
            actor=request.user, version=version, expected_lock_version=data["lock_version"]
        ),
        done=lambda version, _: SUBMITTED.format(number=version.number),
    )


@require_POST
def version_withdraw(request: HtmxRequest, key: str, number: int) -> HttpResponse:
    def act(version: ContractVersion, data: dict[str, Any]) -> object:
        return review.version_withdraw(
            actor=request.user, version=version, expected_lock_version=data["lock_version"]
        )

    return _transition(
        request,
        key,
        number,
        action=review.WITHDRAW,
        form_class=LockForm,
        act=act,
        done=lambda version, _: WITHDRAWN.format(number=version.number),
    )


@require_POST
def version_approve(request: HtmxRequest, key: str, number: int) -> HttpResponse:
    return _transition(
        request,
        key,
        number,
        action=review.APPROVE,
        form_class=ApproveForm,
        act=lambda version, data: review.version_approve(
            actor=request.user,
            version=version,
            report_sha256=data["report_sha256"],
            signed_statement=data["signed_statement"],
            comment=data["comment"],
            acknowledged_widenings=data["acknowledged_widenings"],
        ),
        done=lambda version, _: APPROVED.format(number=version.number),
    )


@require_POST
def version_request_changes(request: HtmxRequest, key: str, number: int) -> HttpResponse:
    return _transition(
        request,
        key,
        number,
        action=review.REQUEST_CHANGES,
        form_class=RequestChangesForm,
        act=lambda version, data: review.version_request_changes(
            actor=request.user, version=version, comment=data["comment"]
        ),
        done=lambda version, _: CHANGES_REQUESTED.format(number=version.number),
    )


@require_POST
def version_publish(request: HtmxRequest, key: str, number: int) -> HttpResponse:
    def act(version: ContractVersion, data: dict[str, Any]) -> Bundle:
        return review.version_publish(
            actor=request.user,
            version=version,
            signed_statement=data["signed_statement"],
            published_at=data["published_at"],
            expected_lock_version=data["lock_version"],
        )

    return _transition(
        request,
        key,
        number,
        action=review.PUBLISH,
        form_class=PublishForm,
        act=act,
        done=lambda version, bundle: PUBLISHED.format(
            number=version.number, sha256=bundle.sha256[:12] + "…"
        ),
    )


@require_POST
def version_retire(request: HtmxRequest, key: str, number: int) -> HttpResponse:
    def act(version: ContractVersion, data: dict[str, Any]) -> object:
        return review.version_retire(
            actor=request.user,
            version=version,
            reason=data["reason"],
            expected_lock_version=data["lock_version"],
        )

    return _transition(
        request,
        key,
        number,
        action=review.RETIRE,
        form_class=RetireForm,
        act=act,
        done=lambda version, _: RETIRED.format(number=version.number),
    )
