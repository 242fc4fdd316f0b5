"""People's Ed25519 signing keys: generation, encryption at rest, and the trusted key set.

The private key is kept as its PKCS#8 PEM encrypted with Fernet (AES-128-CBC + HMAC-SHA256)
under a key derived with HKDF-SHA256 from `settings.SIGNING_KEY_SECRET` (falling back to
`SECRET_KEY`). `SECRET_KEY_FALLBACKS` (or `SIGNING_KEY_SECRET_FALLBACKS`) are tried when
decrypting, so the secret can be rotated like Django's own: add the old one as a fallback,
then `signing_key_reencrypt()`.

What this protects against, and what not (docs/review.md says more): a copy of the database
alone (a backup, a dump) does not reveal anyone's private key. Anyone holding both the
database and the secret — i.e. whoever runs the workbench — can sign as any person. The
workbench is a custodian of its users' keys: a signature by a reviewer means "the workbench
recorded this person's approval of exactly this content", not "this person's own device
signed it". Losing the secret makes every stored private key unusable (existing bundles still
verify: public keys are stored in clear).
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone

from compiler.keys import (
    TrustedKey,
    generate_key_pair,
    key_id,
    load_private_key,
    load_public_key,
)
from contracts import roles
from contracts.models import AuditAction, DecisionType, SigningKey
from contracts.services import NOT_ALLOWED, Actor, audit_record

# Messages tests assert on.
KEY_EXISTS = "{username} already has signing key {key_id}; pass --rotate to replace it."
KEY_UNREADABLE = (
    "The private key {key_id} cannot be decrypted with this workbench's secret "
    "(SIGNING_KEY_SECRET / SECRET_KEY changed?); generate a new key with --rotate."
)

HKDF_INFO = b"evidence-workbench signing keys v1"


def _fernet_key(secret: str) -> bytes:
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=HKDF_INFO).derive(
        secret.encode("utf-8")
    )
    return base64.urlsafe_b64encode(derived)


def _secrets() -> list[str]:
    primary = getattr(settings, "SIGNING_KEY_SECRET", "") or settings.SECRET_KEY
    fallbacks = getattr(settings, "SIGNING_KEY_SECRET_FALLBACKS", None)
    if fallbacks is None:
        fallbacks = getattr(settings, "SECRET_KEY_FALLBACKS", [])
    return [primary, *fallbacks]


def _fernet() -> MultiFernet:
    return MultiFernet([Fernet(_fernet_key(secret)) for secret in _secrets()])


def encrypt_private_key(pem: bytes) -> str:
    return _fernet().encrypt(pem).decode("ascii")


def decrypt_private_key(token: str) -> bytes:
    return _fernet().decrypt(token.encode("ascii"))


def private_key(signing_key: SigningKey) -> Ed25519PrivateKey:
    try:
        return load_private_key(decrypt_private_key(signing_key.private_key_encrypted))
    except InvalidToken:
        raise ValidationError(KEY_UNREADABLE.format(key_id=signing_key.key_id)) from None


# --------------------------------------------------------------------------- services


def _may_manage_keys(actor: Actor | None, user: AbstractBaseUser) -> bool:
    # None: a management command, run by whoever operates the workbench.
    if actor is None:
        return True
    return actor.is_authenticated and (actor.pk == user.pk or actor.is_superuser)


@transaction.atomic
def signing_key_generate(
    *, actor: Actor | None, user: AbstractBaseUser, rotate: bool = False
) -> SigningKey:
    """A new key pair for `user`. With `rotate`, their current key is retired (kept, so
    the bundles it signed still verify); without it, having a key already is an error."""
    if not _may_manage_keys(actor, user):
        raise PermissionDenied(NOT_ALLOWED)
    current = SigningKey.objects.select_for_update().filter(user=user, retired_at__isnull=True)
    existing = current.first()
    if existing is not None and not rotate:
        raise ValidationError(
            KEY_EXISTS.format(username=user.get_username(), key_id=existing.key_id)
        )
    if existing is not None:
        existing_id = existing.key_id
        SigningKey.objects.filter(pk=existing.pk).update(retired_at=timezone.now())
    else:
        existing_id = None
    private_pem, public_pem = generate_key_pair()
    signing_key = SigningKey.objects.create(
        user=user,
        key_id=key_id(load_public_key(public_pem)),
        public_key_pem=public_pem.decode("ascii"),
        private_key_encrypted=encrypt_private_key(private_pem),
    )
    audit_record(
        actor=actor if actor is not None else None,
        action=AuditAction.SIGNING_KEY_CREATED,
        summary=f"Created signing key {signing_key.key_id} for {user.get_username()}"
        + (f" (retired {existing_id})" if existing_id else ""),
        changes={"user": user.get_username(), "key_id": signing_key.key_id, "retired": existing_id},
    )
    return signing_key


def signing_key_ensure(*, user: AbstractBaseUser) -> SigningKey:
    """The user's active key, created if they have none (the demo's idempotent set-up)."""
    return active_key(user) or signing_key_generate(actor=None, user=user)


@transaction.atomic
def signing_key_reencrypt() -> int:
    """Re-encrypt every private key under the current secret (after rotating it)."""
    fernet = _fernet()
    count = 0
    for signing_key in SigningKey.objects.select_for_update():
        token = fernet.rotate(signing_key.private_key_encrypted.encode("ascii")).decode("ascii")
        SigningKey.objects.filter(pk=signing_key.pk).update(private_key_encrypted=token)
        count += 1
    return count


# --------------------------------------------------------------------------- reads


def active_key(user: AbstractBaseUser) -> SigningKey | None:
    return SigningKey.objects.filter(user=user, retired_at__isnull=True).first()


def all_keys() -> Iterable[SigningKey]:
    return SigningKey.objects.select_related("user").order_by("user__username", "-created_at")


def key_roles(user: AbstractBaseUser) -> list[str]:
    """What the person's keys may sign a bundle as, from their groups and permissions now:
    `publish` for an owner of some decision type or a policy owner, `approve` for a reviewer
    of some decision type or a risk reviewer; a superuser both; anyone else (a viewer)
    neither. Four eyes per bundle (not the publisher, not an editor) is the verifier's."""
    if user.is_superuser:
        return ["publish", "approve"]
    groups = set(user.groups.values_list("name", flat=True))
    granted: list[str] = []
    for role, perm, group in (
        ("publish", roles.EDIT, roles.POLICY_OWNERS),
        ("approve", roles.REVIEW, roles.RISK_REVIEWERS),
    ):
        if group in groups or _holds_on_some_type(user, perm):
            granted.append(role)
    return granted


def _holds_on_some_type(user: AbstractBaseUser, codename: str) -> bool:
    from guardian.shortcuts import get_objects_for_user

    return get_objects_for_user(
        user, f"contracts.{codename}", klass=DecisionType, with_superuser=False
    ).exists()


def key_set_entries() -> list[dict[str, Any]]:
    """Every key this workbench knows (retired ones too), with its owner and roles, in the
    shape `compiler.keys.key_set_json` writes."""
    roles_of: dict[int, list[str]] = {}
    entries: list[dict[str, Any]] = []
    for key in all_keys():
        if key.user_id not in roles_of:
            roles_of[key.user_id] = key_roles(key.user)
        entries.append(
            {
                "person": key.user.get_username(),
                "roles": roles_of[key.user_id],
                "retired": not key.is_active,
                "public_key": key.public_key_pem,
            }
        )
    return entries


def trusted_public_keys() -> dict[str, TrustedKey]:
    """Every key this workbench knows, retired ones included, by key id, with its owner and
    the roles `key_roles` gives them now: what publishing and import verify against, and
    what `export_public_keys` writes."""
    trusted: dict[str, TrustedKey] = {}
    for entry in key_set_entries():
        public = load_public_key(entry["public_key"])
        trusted[key_id(public)] = TrustedKey(public, entry["person"], frozenset(entry["roles"]))
    return trusted


def key_owners() -> dict[str, str]:
    """key id -> username, for `verify_bundle(..., key_owners=...)`."""
    return dict(SigningKey.objects.values_list("key_id", "user__username"))
