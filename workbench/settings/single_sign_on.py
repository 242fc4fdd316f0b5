"""The settings single sign-on adds (workbench.accounts), built from a few plain values so the
production profile (from its environment) and the tests (against their own provider) turn it
on the same way. Imports no Django model: it runs while the settings load."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from workbench.accounts.mapping import GroupMap

PROVIDER_BACKEND = "workbench.accounts.backends.ProviderBackend"


def single_sign_on(
    *,
    issuer: str,
    client_id: str,
    client_secret: str,
    authorization_endpoint: str,
    token_endpoint: str,
    userinfo_endpoint: str,
    jwks_endpoint: str,
    logout_endpoint: str,
    group_map: GroupMap,
    provider_name: str,
    access_contact: str,
    break_glass_username: str,
    backends: list[str],
    csp: dict[str, Any],
    scopes: str = "openid email profile",
    username_claim: str = "preferred_username",
    groups_claim: str = "groups",
) -> dict[str, Any]:
    """Settings to add: the provider's endpoints for mozilla-django-oidc (code flow with
    PKCE and nonce, RS256 ID tokens checked against the provider's JWKS), the group map, the
    local sign-in narrowed to the break-glass account, and the provider backend."""
    form_action = list(csp.get("form-action", []))
    if logout_endpoint:
        # Sign-out is a form posted here that the workbench redirects to the provider's
        # end-session endpoint; a browser applies form-action to that redirect too.
        parts = urlsplit(logout_endpoint)
        form_action.append(f"{parts.scheme}://{parts.netloc}")
    position = backends.index("guardian.backends.ObjectPermissionBackend")
    return {
        "SSO_ENABLED": True,
        "OIDC_OP_ISSUER": issuer,
        "OIDC_RP_CLIENT_ID": client_id,
        "OIDC_RP_CLIENT_SECRET": client_secret,
        "OIDC_RP_SIGN_ALGO": "RS256",
        "OIDC_RP_SCOPES": scopes,
        "OIDC_OP_AUTHORIZATION_ENDPOINT": authorization_endpoint,
        "OIDC_OP_TOKEN_ENDPOINT": token_endpoint,
        "OIDC_OP_USER_ENDPOINT": userinfo_endpoint,
        "OIDC_OP_JWKS_ENDPOINT": jwks_endpoint,
        "OIDC_OP_LOGOUT_ENDPOINT": logout_endpoint,
        "OIDC_USE_PKCE": True,
        "OIDC_PKCE_CODE_CHALLENGE_METHOD": "S256",
        "OIDC_USE_NONCE": True,
        # The ID token is the end-session request's id_token_hint.
        "OIDC_STORE_ID_TOKEN": True,
        "OIDC_TIMEOUT": 10,
        "OIDC_AUTHENTICATION_CALLBACK_URL": "sso_callback",
        "OIDC_USERNAME_CLAIM": username_claim,
        "OIDC_GROUPS_CLAIM": groups_claim,
        "OIDC_PROVIDER_NAME": provider_name,
        "SSO_ACCESS_CONTACT": access_contact,
        "SSO_GROUP_MAP": group_map,
        "LOCAL_SIGN_IN_USERNAMES": [break_glass_username] if break_glass_username else [],
        "AUTHENTICATION_BACKENDS": [
            *backends[:position],
            PROVIDER_BACKEND,
            *backends[position:],
        ],
        "SECURE_CSP": {**csp, "form-action": form_action},
    }
