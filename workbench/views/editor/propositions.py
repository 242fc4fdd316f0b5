"""The editor's propositions: add, edit, delete and reorder them and their accepted classes.
Each answers (htmx) with the fragment it changed: the proposition's row, or the propositions
table when the rows are added, deleted or renumbered; without htmx, the whole editor page.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.http import HttpResponse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from contracts import selectors, services
from contracts.models import ContractVersion, Proposition
from workbench import forms
from workbench.http import HtmxRequest
from workbench.views.helpers import (
    found,
    require_edit,
)

from .fragments import PROPOSITIONS, ROW, class_choices, conflict, edit, render_version

# Messages tests assert on.
PROPOSITION_GONE = "That proposition no longer exists; someone else deleted it."


def _proposition(version: ContractVersion, pk: int) -> Proposition | None:
    return version.propositions.filter(pk=pk).first()


def _editable_proposition(
    view: Callable[[HtmxRequest, ContractVersion, Proposition], HttpResponse],
) -> Callable[..., HttpResponse]:
    """The prologue of every proposition edit: a version I may edit, and the row, still there."""

    @wraps(view)
    def wrapper(request: HtmxRequest, key: str, number: int, pk: int) -> HttpResponse:
        version = found(selectors.version_for_user, user=request.user, key=key, number=number)
        require_edit(request, version.decision_type)
        proposition = _proposition(version, pk)
        if proposition is None:
            return _gone(request, version)
        return view(request, version, proposition)

    return wrapper


def _gone(request: HtmxRequest, version: ContractVersion) -> HttpResponse:
    return conflict(request, version, PROPOSITION_GONE)


# --------------------------------------------------------------------------- contract editor


@require_POST
def proposition_add(request: HtmxRequest, key: str, number: int) -> HttpResponse:
    version = found(selectors.version_for_user, user=request.user, key=key, number=number)
    require_edit(request, version.decision_type)
    form = forms.PropositionAddForm(
        request.POST, class_choices=class_choices(selectors.source_classes())
    )
    return edit(
        request,
        version,
        form,
        lambda data: services.proposition_add(
            actor=request.user,
            version=version,
            expected_lock_version=data["lock_version"],
            key=data["key"],
            description=data["description"],
            accepted_classes=data["accepted_classes"],
            required=data["required"],
            max_items=data["max_items"],
        ),
        fragment=PROPOSITIONS,
        on_invalid=lambda form: {"add_form": form},
    )


@require_GET
def proposition_row(request: HtmxRequest, key: str, number: int, pk: int) -> HttpResponse:
    """One proposition's row as it is (an edit cancelled), or the page around it."""
    version = found(selectors.version_for_user, user=request.user, key=key, number=number)
    proposition = _proposition(version, pk)
    if proposition is None:
        return _gone(request, version)
    return render_version(request, version, ROW, proposition=proposition)


@require_http_methods(["GET", "POST"])
@_editable_proposition
def proposition_edit(
    request: HtmxRequest, version: ContractVersion, proposition: Proposition
) -> HttpResponse:
    if request.method == "GET":
        form = forms.PropositionForm(
            initial={
                "lock_version": version.lock_version,
                "key": proposition.key,
                "description": proposition.description,
                "required": proposition.required,
                "max_items": proposition.max_items,
            }
        )
        return render_version(
            request, version, ROW, proposition=proposition, editing=(proposition.pk, form)
        )
    return edit(
        request,
        version,
        forms.PropositionForm(request.POST),
        lambda data: services.proposition_update(
            actor=request.user,
            proposition=proposition,
            expected_lock_version=data["lock_version"],
            key=data["key"],
            description=data["description"],
            required=data["required"],
            max_items=data["max_items"],
        ),
        fragment=ROW,
        proposition=proposition,
        on_invalid=lambda form: {"editing": (proposition.pk, form)},
    )


@require_POST
@_editable_proposition
def proposition_delete(
    request: HtmxRequest, version: ContractVersion, proposition: Proposition
) -> HttpResponse:
    return edit(
        request,
        version,
        forms.LockForm(request.POST),
        lambda data: services.proposition_delete(
            actor=request.user,
            proposition=proposition,
            expected_lock_version=data["lock_version"],
        ),
        fragment=PROPOSITIONS,
    )


@require_POST
@_editable_proposition
def proposition_move(
    request: HtmxRequest, version: ContractVersion, proposition: Proposition
) -> HttpResponse:
    return edit(
        request,
        version,
        forms.MoveForm(request.POST),
        lambda data: services.proposition_move(
            actor=request.user,
            proposition=proposition,
            expected_lock_version=data["lock_version"],
            direction=data["direction"],
        ),
        fragment=PROPOSITIONS,
    )


@require_POST
@_editable_proposition
def accepted_class_add(
    request: HtmxRequest, version: ContractVersion, proposition: Proposition
) -> HttpResponse:
    form = forms.AcceptedClassForm(
        request.POST,
        class_choices=class_choices(selectors.source_classes(), proposition.accepted_classes),
    )
    return edit(
        request,
        version,
        form,
        lambda data: services.accepted_class_add(
            actor=request.user,
            proposition=proposition,
            expected_lock_version=data["lock_version"],
            class_key=data["class_key"],
        ),
        fragment=ROW,
        proposition=proposition,
        on_invalid=lambda form: {"accept_form": (proposition.pk, form)},
    )


@require_POST
@_editable_proposition
def accepted_class_move(
    request: HtmxRequest, version: ContractVersion, proposition: Proposition
) -> HttpResponse:
    return edit(
        request,
        version,
        forms.AcceptedClassMoveForm(request.POST),
        lambda data: services.accepted_class_move(
            actor=request.user,
            proposition=proposition,
            expected_lock_version=data["lock_version"],
            class_key=data["class_key"],
            direction=data["direction"],
        ),
        fragment=ROW,
        proposition=proposition,
    )


@require_POST
@_editable_proposition
def accepted_class_remove(
    request: HtmxRequest, version: ContractVersion, proposition: Proposition
) -> HttpResponse:
    return edit(
        request,
        version,
        forms.AcceptedClassRemoveForm(request.POST),
        lambda data: services.accepted_class_remove(
            actor=request.user,
            proposition=proposition,
            expected_lock_version=data["lock_version"],
            class_key=data["class_key"],
        ),
        fragment=ROW,
        proposition=proposition,
    )
