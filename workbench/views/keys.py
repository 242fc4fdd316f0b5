"""What a verifier needs, in the browser: the public signing keys (and creating one's own
first key) and a version's bundle, byte for byte as it was signed."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from compiler.keys import KEY_SET_FILE
from contracts import selectors
from publishing import review, signing, tokens
from workbench.http import HtmxRequest

from .helpers import found

# Messages tests assert on.
KEY_CREATED = "Your signing key is {key_id}."
KEY_REVOKED = "Key {key_id} is revoked: what it signs from now on is invalid."
KEY_RETIRE_UNCONFIRMED = (
    "Nothing was registered: a new key retires your current key {key_id}. Tick "
    "\u201cI understand this retires key {key_id}\u201d to replace it."
)


@require_GET
def version_bundle(request: HtmxRequest, key: str, number: int) -> HttpResponse:
    version = found(selectors.version_for_user, user=request.user, key=key, number=number)
    bundle = review.version_bundle(version)
    if bundle is None:
        raise Http404(review.NO_BUNDLE.format(number=number))
    response = HttpResponse(bundle.data, content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="{bundle.filename}"'
    response["ETag"] = f'"{bundle.sha256}"'
    return response


@require_GET
def version_key_set(request: HtmxRequest, key: str, number: int) -> HttpResponse:
    """The key set (keys.json) of the keys that signed the type's bundles, narrowed to this
    type: with the bundle, all `python -m compiler verify-bundle` needs (`--public-key`)."""
    version = found(selectors.version_for_user, user=request.user, key=key, number=number)
    if review.version_bundle(version) is None:
        raise Http404(review.NO_BUNDLE.format(number=number))
    response = HttpResponse(
        tokens.signer_key_set(version.decision_type), content_type="application/json"
    )
    response["Content-Disposition"] = f'attachment; filename="{KEY_SET_FILE}"'
    return response


@require_GET
def signing_keys(request: HtmxRequest) -> HttpResponse:
    """Every known public key, with its owner and id: what a verifier must trust."""
    return _keys_page(request)


def _keys_page(request: HtmxRequest, *, refused: str = "", status: int = 200) -> HttpResponse:
    context = {
        "keys": signing.all_keys(),
        "mine": signing.active_key(request.user),
        "may_register": signing.may_hold_key(request.user),
        "no_signing_role": signing.NO_SIGNING_ROLE_YOURS,
        "refused": refused,
        "management_command": settings.MANAGEMENT_COMMAND,
    }
    return render(request, "contracts/signing_keys.html", context, status=status)


@require_POST
def signing_key_create(request: HtmxRequest) -> HttpResponse:
    """A signed-in person registers their own public key, made in this browser (signing.js)
    or with `evidence-compiler keygen`; a current key is rotated out, only when the person
    ticked that they understand it retires that key. Only who publishes or
    approves may (viewers never sign): anyone else gets the page back with 403 and why."""
    if not signing.may_hold_key(request.user):
        return _keys_page(request, refused=signing.NO_SIGNING_ROLE_YOURS, status=403)
    current = signing.active_key(request.user)
    if current is not None and request.POST.get("retire_current", "") != current.key_id:
        # Replacing retires the current key (and the browser's copy): only when the person
        # said so for this very key, so a stale page cannot retire a newer one.
        messages.error(request, KEY_RETIRE_UNCONFIRMED.format(key_id=current.key_id))
        return redirect("signing_keys")
    try:
        key = signing.signing_key_register(
            actor=request.user,
            user=request.user,
            public_key=request.POST.get("public_key", ""),
            origin=request.POST.get("origin", ""),
        )
    except ValidationError as error:
        for message in error.messages:
            messages.error(request, message)
    else:
        messages.success(request, KEY_CREATED.format(key_id=key.key_id))
    return redirect("signing_keys")


@require_POST
def signing_key_revoke(request: HtmxRequest) -> HttpResponse:
    """A person revokes one of their own keys (superusers anyone's)."""
    key = signing.key_by_id(request.POST.get("key_id", ""))
    if key is None or not (key.user_id == request.user.pk or request.user.is_superuser):
        raise Http404("No such key of yours.")
    try:
        signing.signing_key_revoke(actor=request.user, signing_key=key)
    except ValidationError as error:
        for message in error.messages:
            messages.error(request, message)
    else:
        messages.success(request, KEY_REVOKED.format(key_id=key.key_id))
    return redirect("signing_keys")
