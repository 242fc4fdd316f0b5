"""The two ways to sign in: through the identity provider (mozilla-django-oidc's backend, made
stricter) and with a local password, which single sign-on narrows to the break-glass account."""

from __future__ import annotations

import logging
from enum import StrEnum
from typing import Any, NoReturn

import jwt
import requests
from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, SuspiciousOperation
from django.db import transaction
from django.http import HttpRequest
from django.utils import timezone
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from .models import ProviderIdentity
from .provisioning import roles_apply

logger = logging.getLogger(__name__)

# Seconds of clock difference with the provider tolerated on `exp`, `iat` and `nbf`.
CLOCK_SKEW_SECONDS = 30


class Refusal(StrEnum):
    """Why a sign-in through the provider was refused (the page says it in words)."""

    NO_ACCESS = "no_access"
    TOKEN = "token"
    CLAIMS = "claims"
    ACCOUNT_CONFLICT = "account_conflict"
    PROVIDER_UNREACHABLE = "provider_unreachable"


def local_sign_in_allowed(username: str) -> bool:
    """Whether `username` may sign in with a local password (`LOCAL_SIGN_IN_USERNAMES`: None
    lets every account, as the demo does; with single sign-on on, only the break-glass one)."""
    allowed = settings.LOCAL_SIGN_IN_USERNAMES
    return allowed is None or username in allowed


# django-axes locks a username tried from one address (production.py).
USERNAME_AND_ADDRESS: list[str | list[str]] = [["username", "ip_address"]]


def axes_lockout_parameters(
    request_or_attempt: Any, credentials: dict[str, Any] | None = None
) -> list[str | list[str]]:
    """What django-axes counts failures by (`AXES_LOCKOUT_PARAMETERS`): a username tried from
    one address; for a sign-in through the provider, which sends no username, nothing — axes
    then records no failure. The provider throttles its own passwords, and counting refused
    callbacks by address alone would lock out everyone behind one office's NAT."""
    if credentials is not None and "username" not in credentials:
        return ["username"]  # with no username, axes neither records nor locks
    return USERNAME_AND_ADDRESS


class LocalPasswordBackend(ModelBackend):
    """Django's password backend, for the accounts `local_sign_in_allowed` names. A session
    a refused account opened earlier ends too (its user is no longer loaded)."""

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> Any:
        name = username if username is not None else kwargs.get(User.USERNAME_FIELD)
        if name is not None and not local_sign_in_allowed(name):
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)

    def get_user(self, user_id: int) -> Any:
        user = super().get_user(user_id)
        if user is not None and not local_sign_in_allowed(user.get_username()):
            return None
        return user


class ProviderBackend(OIDCAuthenticationBackend):
    """Sign-in through the OpenID provider: authorisation code with PKCE (the library), the ID
    token checked in full here (signature by the provider's published key, `iss`, `aud`,
    `exp`, `iat`: the library checks only the signature and expiry), the account found by
    issuer and subject, and the person's roles set from their groups at every sign-in.

    A refusal sets `request.sign_in_refusal` for the callback's page and raises
    PermissionDenied, which ends Django's `authenticate` with no user.
    """

    def authenticate(self, request: HttpRequest | None, **kwargs: Any) -> Any:
        try:
            return super().authenticate(request, **kwargs)
        except requests.RequestException as error:
            logger.warning("identity provider unreachable: %s", error)
            self._refuse(Refusal.PROVIDER_UNREACHABLE)

    def get_payload_data(self, token: bytes | str, key: Any) -> dict[str, Any]:
        # Never an unsigned token, whatever OIDC_ALLOW_UNSECURED_JWT says.
        return jwt.decode(
            token,
            key,
            algorithms=[self.OIDC_RP_SIGN_ALGO],
            audience=self.OIDC_RP_CLIENT_ID,
            issuer=settings.OIDC_OP_ISSUER,
            leeway=CLOCK_SKEW_SECONDS,
            options={"require": ["exp", "iat", "iss", "aud", "sub"]},
        )

    def verify_token(self, token: str, **kwargs: Any) -> dict[str, Any]:
        try:
            header = jwt.get_unverified_header(token)
            # The library would look the key up by these two and fail on a missing one.
            if header.get("alg") != self.OIDC_RP_SIGN_ALGO or not header.get("kid"):
                raise jwt.InvalidTokenError(f"unexpected header {header}")
            payload: dict[str, Any] = super().verify_token(token, **kwargs)
        except (jwt.InvalidTokenError, SuspiciousOperation) as error:
            logger.warning("identity provider token refused: %s", error)
            self._refuse(Refusal.TOKEN)
        return payload

    def get_userinfo(
        self, access_token: str, id_token: str, payload: dict[str, Any]
    ) -> dict[str, Any]:
        """The ID token's claims with the user-info endpoint's added (some providers put the
        groups in only one of them); both must speak of the same subject."""
        userinfo = super().get_userinfo(access_token, id_token, payload)
        if userinfo.get("sub") != payload["sub"]:
            logger.warning("user-info subject differs from the ID token's")
            self._refuse(Refusal.TOKEN)
        # Who it is stays the signed token's word.
        return {**payload, **userinfo, "iss": payload["iss"], "sub": payload["sub"]}

    def get_or_create_user(self, access_token: str, id_token: str, payload: dict[str, Any]) -> User:
        claims = self.get_userinfo(access_token, id_token, payload)
        username = claims.get(settings.OIDC_USERNAME_CLAIM)
        groups = claims.get(settings.OIDC_GROUPS_CLAIM, [])
        if not isinstance(username, str) or not _fits(username) or not _strings(groups):
            logger.warning(
                "identity provider claims lack %s or %s as a list of names",
                settings.OIDC_USERNAME_CLAIM,
                settings.OIDC_GROUPS_CLAIM,
            )
            self._refuse(Refusal.CLAIMS)
        with transaction.atomic():
            user = self._account(claims, username, groups)
            allowed = roles_apply(
                user=user, provider_groups=groups, group_map=settings.SSO_GROUP_MAP
            )
        if not allowed:
            logger.info("sign-in refused: no group of %s is in the group map", username)
            self._refuse(Refusal.NO_ACCESS)
        return user

    def _account(self, claims: dict[str, Any], username: str, groups: list[str]) -> User:
        identity = (
            ProviderIdentity.objects.select_for_update()
            .select_related("user")
            .filter(issuer=claims["iss"], subject=claims["sub"])
            .first()
        )
        if identity is None:
            if not settings.SSO_GROUP_MAP.mapped(groups):
                self._refuse(Refusal.NO_ACCESS)  # no account for someone who may not enter
            if User.objects.filter(username=username).exists():
                logger.warning("provider username %s is a local account's", username)
                self._refuse(Refusal.ACCOUNT_CONFLICT)
            user = User.objects.create_user(username)  # no usable password
            identity = ProviderIdentity(user=user, issuer=claims["iss"], subject=claims["sub"])
        user = identity.user
        email = str(claims.get("email") or "")
        user.email = email if len(email) <= 254 else ""
        user.first_name = str(claims.get("given_name") or "")[:150]
        user.last_name = str(claims.get("family_name") or "")[:150]
        user.save(update_fields=["email", "first_name", "last_name"])
        identity.groups = sorted(set(groups))
        identity.last_sign_in = timezone.now()
        identity.save()
        return user

    def _refuse(self, reason: Refusal) -> NoReturn:
        if getattr(self, "request", None) is not None:
            self.request.sign_in_refusal = reason
        raise PermissionDenied(reason)


def _fits(username: str) -> bool:
    return 0 < len(username) <= (User._meta.get_field("username").max_length or 150)


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)
