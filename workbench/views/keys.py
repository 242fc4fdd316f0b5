"""What a verifier needs, in the browser: the public signing keys (and creating one's own
first key) and a version's bundle, byte for byte as it was signed."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from contracts import selectors
from publishing import review, signing

# Messages tests assert on.
KEY_CREATED = "Your signing key is {key_id}."


@require_GET
def version_bundle(request: HttpRequest, key: str, number: int) -> HttpResponse:
    version = selectors.version_for_user(user=request.user, key=key, number=number)
    bundle = review.version_bundle(version)
    if bundle is None:
        raise Http404(review.NO_BUNDLE.format(number=number))
    response = HttpResponse(bundle.data, content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="{bundle.filename}"'
    response["ETag"] = f'"{bundle.sha256}"'
    return response


@require_GET
def signing_keys(request: HttpRequest) -> HttpResponse:
    """Every known public key, with its owner and id: what a verifier must trust."""
    return render(
        request,
        "contracts/signing_keys.html",
        {"keys": signing.all_keys(), "mine": signing.active_key(request.user)},
    )


@require_POST
def signing_key_create(request: HttpRequest) -> HttpResponse:
    """A signed-in person creates their own first key (rotation is an operator's command)."""
    try:
        key = signing.signing_key_generate(actor=request.user, user=request.user)
    except ValidationError as error:
        for message in error.messages:
            messages.error(request, message)
    else:
        messages.success(request, KEY_CREATED.format(key_id=key.key_id))
    return redirect("signing_keys")
