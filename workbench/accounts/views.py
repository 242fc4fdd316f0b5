"""Sign-in and sign-out pages: the local form, the provider's redirect and callback, and the
page that says why a sign-in through the provider was refused."""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.conf import settings
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_not_required
from django.contrib.auth.forms import AuthenticationForm
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render, resolve_url
from django.utils.decorators import method_decorator
from mozilla_django_oidc.views import (
    OIDCAuthenticationCallbackView,
    OIDCAuthenticationRequestView,
    OIDCLogoutView,
)

from .backends import Refusal, local_sign_in_allowed
from .middleware import SIGNED_IN_THROUGH_PROVIDER_AT

# Messages tests assert on.
LOCAL_SIGN_IN_REFUSED = (
    "Local passwords are turned off here: use “Sign in with {provider}” above. Only the "
    "emergency administrator account signs in with a password."
)
REFUSALS = {
    Refusal.NO_ACCESS: (
        "You signed in at {provider}, but none of your groups there gives access to the "
        "Evidence Workbench. To be given access, ask {contact}."
    ),
    Refusal.TOKEN: (
        "The sign-in could not be verified (the identity provider's answer was not valid, or "
        "it had expired), so you are not signed in. Try again; if it keeps happening, tell "
        "{contact}."
    ),
    Refusal.CLAIMS: (
        "{provider} did not say who you are or which groups you are in, so you are not signed "
        "in. Tell {contact}: the workbench's client at {provider} must send them."
    ),
    Refusal.ACCOUNT_CONFLICT: (
        "Your username at {provider} belongs to a local account here, so it cannot be used for "
        "single sign-on. Ask {contact} to rename or remove the local account."
    ),
    Refusal.PROVIDER_UNREACHABLE: (
        "{provider} did not answer, so you are not signed in. Try again in a few minutes."
    ),
}
SIGN_IN_FAILED = "The sign-in through {provider} did not complete. Try again."


def _provider() -> str:
    return str(settings.OIDC_PROVIDER_NAME)


class SignInForm(AuthenticationForm):
    """Django's sign-in form, which names the single sign-on when a local password is not
    allowed for the account (the password backend refuses it anyway)."""

    def clean(self) -> dict[str, Any]:
        username = self.cleaned_data.get("username")
        if username and not local_sign_in_allowed(username):
            raise forms.ValidationError(
                LOCAL_SIGN_IN_REFUSED.format(provider=_provider()), code="single_sign_on_only"
            )
        return super().clean()


@method_decorator(login_not_required, name="dispatch")
class SignInView(auth_views.LoginView):
    form_class = SignInForm
    redirect_authenticated_user = True

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        return super().get_context_data(
            sso_enabled=settings.SSO_ENABLED,
            provider=_provider(),
            local_restricted=settings.LOCAL_SIGN_IN_USERNAMES is not None,
            **kwargs,
        )


@login_not_required
def sso_start(request: HttpRequest) -> HttpResponse:
    """To the provider's authorisation endpoint (code flow, PKCE, state and nonce)."""
    if not settings.SSO_ENABLED:
        raise Http404("Single sign-on is not configured.")
    return OIDCAuthenticationRequestView.as_view()(request)


@method_decorator(login_not_required, name="dispatch")
class SsoCallbackView(OIDCAuthenticationCallbackView):
    """The provider's answer: signed in, or a page that says why not (never a bare error)."""

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not settings.SSO_ENABLED:
            raise Http404("Single sign-on is not configured.")
        response: HttpResponse = super().dispatch(request, *args, **kwargs)
        return response

    def login_success(self) -> HttpResponse:
        response: HttpResponse = super().login_success()
        self.request.session[SIGNED_IN_THROUGH_PROVIDER_AT] = time.time()
        return response

    def login_failure(self) -> HttpResponse:
        reason = getattr(self.request, "sign_in_refusal", None)
        template = REFUSALS.get(reason, SIGN_IN_FAILED) if reason else SIGN_IN_FAILED
        message = template.format(provider=_provider(), contact=settings.SSO_ACCESS_CONTACT)
        return render(
            self.request,
            "registration/sign_in_refused.html",
            {"message": message, "provider": _provider()},
            status=403,
        )


def provider_logout_url(request: HttpRequest) -> str:
    """Where sign-out goes (`OIDC_OP_LOGOUT_URL_METHOD`): for a session opened through the
    provider, its end-session endpoint, so the provider's session ends too, then back to the
    sign-in page; otherwise straight to the sign-in page."""
    back = resolve_url(settings.LOGOUT_REDIRECT_URL)
    id_token = request.session.get("oidc_id_token")
    if not (settings.SSO_ENABLED and settings.OIDC_OP_LOGOUT_ENDPOINT and id_token):
        return back
    query = urlencode(
        {
            "id_token_hint": id_token,
            "client_id": settings.OIDC_RP_CLIENT_ID,
            "post_logout_redirect_uri": request.build_absolute_uri(back),
        }
    )
    return f"{settings.OIDC_OP_LOGOUT_ENDPOINT}?{query}"


sign_out = OIDCLogoutView.as_view()
