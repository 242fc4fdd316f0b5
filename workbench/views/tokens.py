"""Service tokens and recorded decisions in the browser.

* `/tokens/`: the tokens a person manages, and a form to create one for decision types they
  own. The created token's secret is shown on the page that answers the form, once: it is
  not stored, and that answer is marked `no-store`.
* revoking a token: one POST.
* `Replay recorded decisions` on a version's impact report: queues the replay
  (`publishing.replay`), then back to the report.
"""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from contracts import selectors
from publishing import contract_files, replay, tokens

TEMPLATE = "publishing/tokens.html"

# Messages tests assert on.
REVOKED = "Token {prefix}… is revoked: calls with it now answer 401."
REPLAY_QUEUED = "The recorded decisions are being replayed against version {number}."


class TokenForm(forms.Form):
    name = forms.CharField(max_length=120, help_text="Which service uses it, e.g. retrieval-eu.")
    decision_types = forms.ModelMultipleChoiceField(
        queryset=None, widget=forms.CheckboxSelectMultiple,
        help_text="The decision types it may read bundles of and post receipts for.",
    )  # fmt: skip

    def __init__(self, *args, user, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        field = self.fields["decision_types"]
        field.queryset = tokens.types_for_tokens(user=user)  # type: ignore[attr-defined]
        field.label_from_instance = lambda t: f"{t.key} — {t.title}"  # type: ignore[attr-defined]


def _page(request: HttpRequest, form: TokenForm, *, secret: str = "", status: int = 200):
    context = {
        "form": form,
        "tokens": tokens.tokens_for_user(user=request.user),
        "secret": secret,
    }
    response = render(request, TEMPLATE, context, status=status)
    if secret:
        response["Cache-Control"] = "no-store"
    return response


@require_http_methods(["GET", "POST"])
def token_list(request: HttpRequest) -> HttpResponse:
    if request.method == "GET":
        return _page(request, TokenForm(user=request.user))
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
def token_revoke(request: HttpRequest, pk: int) -> HttpResponse:
    token = tokens.token_for_user(user=request.user, pk=pk)
    try:
        tokens.token_revoke(actor=request.user, token=token)
    except ValidationError as error:
        for message in error.messages:
            messages.error(request, message)
    else:
        messages.success(request, REVOKED.format(prefix=token.prefix))
    return redirect("token_list")


@require_POST
def recorded_decisions_replay(request: HttpRequest, key: str, number: int) -> HttpResponse:
    version = selectors.version_for_user(user=request.user, key=key, number=number)
    if not replay.may_replay(request.user, version):
        raise PermissionDenied
    replay.replay_start(actor=request.user, version=version)
    messages.success(request, REPLAY_QUEUED.format(number=number))
    return redirect("version_impact", key, number)


@require_GET
def contract_tests_zip(request: HttpRequest, key: str) -> HttpResponse:
    """The type's contract tests as a zip of the directory `evidence-compiler test` runs."""
    decision_type = selectors.decision_type_for_user(user=request.user, key=key)
    files = contract_files.export_files(decision_type)
    response = HttpResponse(
        contract_files.zip_bytes(files, root=key), content_type="application/zip"
    )
    response["Content-Disposition"] = f'attachment; filename="{key}.contract-tests.zip"'
    return response
