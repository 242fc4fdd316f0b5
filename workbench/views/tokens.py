"""Service tokens and recorded decisions in the browser.

* `/tokens/`: the tokens a person manages, and a form to create one for decision types they
  own. The created token's secret is shown on the page that answers the form, once: it is
  not stored, and that answer is marked `no-store`.
* revoking a token: one POST.
* `Replay recorded decisions` on a version's impact report: queues the replay
  (`publishing.replay`), then back to the report.
"""

from __future__ import annotations

import base64
import os
import tempfile
from pathlib import Path
from typing import Any, cast

from django import forms
from django.contrib import messages
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from compiler_tools import InvalidTestFiles
from contracts import selectors
from contracts.models import DecisionType
from contracts.services import EditConflict
from publishing import contract_files, contract_import, replay, tokens
from workbench.http import HtmxRequest

from .helpers import found
from .paging import paged
from .parameters import int_parameter

TEMPLATE = "publishing/tokens.html"
IMPORT_TEMPLATE = "publishing/contract_tests_import.html"

# Messages tests assert on.
REVOKED = "Token {prefix}… is revoked: calls with it now answer 401."
REPLAY_QUEUED = "The recorded decisions are being replayed against version {number}."


class _DecisionTypesField(forms.ModelMultipleChoiceField):
    def label_from_instance(self, obj: DecisionType) -> str:
        return f"{obj.key} — {obj.title}"


class TokenForm(forms.Form):
    name = forms.CharField(max_length=120, help_text="Which service uses it, e.g. retrieval-eu.")
    decision_types = _DecisionTypesField(
        queryset=None, widget=forms.CheckboxSelectMultiple,
        help_text="The decision types it may read bundles of and post receipts for.",
    )  # fmt: skip

    def __init__(self, *args: Any, user: User, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = cast(_DecisionTypesField, self.fields["decision_types"])
        field.queryset = tokens.types_for_tokens(user=user)


def _page(request: HtmxRequest, form: TokenForm, *, secret: str = "", status: int = 200):
    listing = paged(request, tokens.tokens_for_user(user=request.user))
    tokens.with_standing(listing.rows)
    context = {"form": form, "tokens": listing, "secret": secret}
    response = render(request, TEMPLATE, context, status=status)
    if secret:
        response["Cache-Control"] = "no-store"
    return response


@require_http_methods(["GET", "POST"])
def token_list(request: HtmxRequest) -> HttpResponse:
    if request.method == "GET":
        return _page(request, TokenForm(user=request.user))
    if not tokens.types_for_tokens(user=request.user).exists():
        # Only an owner makes tokens; the page shows anyone else no form (a viewer: 403).
        raise PermissionDenied(tokens.NOT_OWNER.format(keys="any decision type"))
    form = TokenForm(request.POST, user=request.user)
    if not form.is_valid():
        return _page(request, form, status=422)
    try:
        _token, secret = tokens.token_create(
            actor=request.user,
            name=form.cleaned_data["name"],
            decision_types=form.cleaned_data["decision_types"],
        )
    except ValidationError as error:
        for field, problems in error.message_dict.items():
            for problem in problems:
                form.add_error(field if field in form.fields else None, problem)
        return _page(request, form, status=422)
    return _page(request, TokenForm(user=request.user), secret=secret)


@require_POST
def token_revoke(request: HtmxRequest, pk: int) -> HttpResponse:
    token = found(tokens.token_for_user, user=request.user, pk=pk)
    try:
        tokens.token_revoke(actor=request.user, token=token)
    except ValidationError as error:
        for message in error.messages:
            messages.error(request, message)
    else:
        messages.success(request, REVOKED.format(prefix=token.prefix))
    return redirect("token_list")


@require_POST
def recorded_decisions_replay(request: HtmxRequest, key: str, number: int) -> HttpResponse:
    version = found(selectors.version_for_user, user=request.user, key=key, number=number)
    if not replay.may_replay(request.user, version):
        raise PermissionDenied
    replay.replay_start(actor=request.user, version=version)
    messages.success(request, REPLAY_QUEUED.format(number=number))
    return redirect("version_impact", key, number)


@require_GET
def contract_tests_zip(request: HtmxRequest, key: str) -> HttpResponse:
    """The type's contract tests as a zip of the directory `evidence-compiler test` runs: of
    the version `?version=N` names (404 when it has none), else of the current version."""
    decision_type = found(selectors.decision_type_for_user, user=request.user, key=key)
    number = int_parameter(request.GET, "version")
    version = (
        found(selectors.version_for_user, user=request.user, key=key, number=number)
        if number is not None
        else None
    )
    files = contract_files.export_files(decision_type, version)
    response = HttpResponse(
        contract_files.zip_bytes(files, root=key), content_type="application/zip"
    )
    suffix = f".v{number}" if number is not None else ""
    response["Content-Disposition"] = f'attachment; filename="{key}{suffix}.contract-tests.zip"'
    return response


IMPORTED = "Imported the contract tests: {count} change(s) written."


@require_http_methods(["GET", "POST"])
def contract_tests_import(request: HtmxRequest, key: str) -> HttpResponse:
    """Upload a zip, read the plan; confirm (the zip comes back in the form, base64) to
    apply it: the draft's contract and the suite. The plan's sha256 must still hold when
    confirmed (409 otherwise)."""
    decision_type = found(selectors.decision_type_for_user, user=request.user, key=key)
    if not selectors.can_edit(user=request.user, decision_type=decision_type):
        raise PermissionDenied
    context: dict[str, object] = {"decision_type": decision_type}
    if request.method == "GET":
        return render(request, IMPORT_TEMPLATE, context)
    upload = request.FILES.get("file")
    if upload is not None:
        if upload.size and upload.size > contract_files.UPLOAD_MAX_BYTES:
            context["errors"] = [contract_files.TOO_LARGE.format(
                limit=contract_files.UPLOAD_MAX_BYTES)]  # fmt: skip
            return render(request, IMPORT_TEMPLATE, context, status=422)
        data = upload.read()
    else:
        try:
            data = base64.b64decode(request.POST.get("archive", ""), validate=True)
        except ValueError:
            data = b""
    confirm = request.POST.get("confirm", "")
    with tempfile.TemporaryDirectory() as scratch:
        try:
            directory = contract_files.unpack_zip(data, Path(scratch))
            if confirm and upload is None:
                plan = contract_import.import_apply(
                    actor=request.user, decision_type=decision_type, directory=directory,
                    confirmed_sha256=confirm,
                )  # fmt: skip
                count = len(plan.contract_changes) + sum(
                    len(g["added"]) + len(g["replaced"]) for g in (plan.corpora, plan.scenarios)
                )
                messages.success(request, IMPORTED.format(count=count))
                return redirect("scenarios:suite", key)
            plan = contract_import.import_plan(decision_type, directory)
        except InvalidTestFiles as exc:
            # Each file as the zip names it, not as the scratch directory holds it.
            lines = str(exc).splitlines()[1:]
            context["errors"] = [line.replace(f"{scratch}{os.sep}", "") for line in lines]
            return render(request, IMPORT_TEMPLATE, context, status=422)
        except EditConflict as exc:
            context["errors"] = [exc.message]
            return render(request, IMPORT_TEMPLATE, context, status=409)
        except ValidationError as exc:
            context["errors"] = exc.messages
            return render(request, IMPORT_TEMPLATE, context, status=422)
    context.update(plan=plan, plan_lines=contract_import.plan_lines(plan),
                   archive=base64.b64encode(data).decode("ascii"))  # fmt: skip
    return render(request, IMPORT_TEMPLATE, context)
