"""People's Ed25519 public signing keys: registering, rotating and revoking them, and the
trusted key set.

A person's private key never reaches the workbench: it is generated in their browser
(WebCrypto, non-extractable, in IndexedDB; `static/workbench/signing.js`) or with
`evidence-compiler keygen` on their own machine, and they register the public half here. Every
approval and publication is a statement signed on their side (`compiler_trust._statements`); the
workbench checks the signature against the registered key and stores it, and publishing only
assembles the bundle from those statements. So holding the database and the secret does not
let anyone sign as a reviewer (docs/bundles.md, "Trust model").

Keys made before that are `legacy`: the workbench generated them and kept the private key,
encrypted with Fernet under a key derived with HKDF-SHA256 from `settings.SIGNING_KEY_SECRET`
(falling back to `SECRET_KEY`). Bundles they signed still verify, with a warning naming the
legacy signatures; nothing signs with them any more, and no new approval can name one.
`signing_key_reencrypt()` still re-encrypts them after a secret rotation.
"""

from __future__ import annotations

import base64
import datetime as dt
from collections.abc import Iterable
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from guardian.models import GroupObjectPermission, UserObjectPermission
from guardian.shortcuts import get_objects_for_user

from compiler_trust import (
    KeyLoadError,
    TrustedKey,
    key_id,
    load_private_key,
    load_public_key,
    public_key_pem,
)
from contracts import roles
from contracts.models import AuditAction, DecisionType, SigningKey
from contracts.services import NOT_ALLOWED, Actor, audit_record

# Messages tests assert on.
KEY_ORIGIN = "A key is registered from the browser or from a key file (evidence-compiler keygen)."
KEY_UNUSABLE = "This is not an Ed25519 public key:"
KEY_REGISTERED = "Key {key_id} is already registered."
KEY_ALREADY_REVOKED = "Key {key_id} is already revoked."
NO_SIGNING_ROLE = (
    "Only people who publish or approve sign, so only they register a signing key: {user} owns"
    " and reviews no decision type and is neither a policy owner nor a risk reviewer."
)
NO_SIGNING_ROLE_YOURS = (
    "Only people who publish or approve sign, so only they register a signing key: you own and"
    " review no decision type and are neither a policy owner nor a risk reviewer."
)
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


def _may_manage_keys(actor: Actor | None, user: User) -> bool:
    # None: a management command, run by whoever operates the workbench.
    if actor is None:
        return True
    return actor.is_authenticated and (actor.pk == user.pk or actor.is_superuser)


@transaction.atomic
def signing_key_register(
    *, actor: Actor | None, user: User, public_key: str | bytes, origin: str
) -> SigningKey:
    """Register `user`'s public key (PEM or OpenSSH) made in their browser or with keygen.
    A current key is rotated out (retired, kept so what it signed still verifies)."""
    if not _may_manage_keys(actor, user):
        raise PermissionDenied(NOT_ALLOWED)
    if not may_hold_key(user):
        raise PermissionDenied(NO_SIGNING_ROLE.format(user=user.get_username()))
    if origin not in (SigningKey.Origin.BROWSER, SigningKey.Origin.CLI):
        raise ValidationError({"origin": KEY_ORIGIN})
    try:
        public = load_public_key(public_key)
    except KeyLoadError as exc:
        raise ValidationError({"public_key": f"{KEY_UNUSABLE} {exc}"}) from None
    kid = key_id(public)
    if SigningKey.objects.filter(key_id=kid).exists():
        raise ValidationError({"public_key": KEY_REGISTERED.format(key_id=kid)})
    current = SigningKey.objects.select_for_update().filter(user=user, retired_at__isnull=True)
    existing = current.first()
    if existing is not None:
        SigningKey.objects.filter(pk=existing.pk).update(retired_at=timezone.now())
    signing_key = SigningKey.objects.create(
        user=user, key_id=kid, public_key_pem=public_key_pem(public).decode("ascii"), origin=origin
    )
    retired = existing.key_id if existing else None
    audit_record(
        actor=actor,
        action=AuditAction.SIGNING_KEY_REGISTERED,
        summary=f"Registered signing key {kid} ({origin}) for {user.get_username()}"
        + (f", rotating out {retired}" if retired else ""),
        changes={"user": user.get_username(), "key_id": kid, "origin": origin, "retired": retired},
    )
    return signing_key


@transaction.atomic
def signing_key_revoke(*, actor: Actor | None, signing_key: SigningKey) -> SigningKey:
    """Revoke a key (lost, or suspected to be used by someone else): statements it signs
    from now on are invalid, those signed earlier stay valid with their date."""
    locked = SigningKey.objects.select_for_update().get(pk=signing_key.pk)
    if not _may_manage_keys(actor, locked.user):
        raise PermissionDenied(NOT_ALLOWED)
    if locked.revoked_at is not None:
        raise ValidationError(KEY_ALREADY_REVOKED.format(key_id=locked.key_id))
    now = timezone.now().replace(microsecond=0)
    locked.revoked_at = now
    locked.retired_at = locked.retired_at or now
    locked.save(update_fields=["revoked_at", "retired_at"])
    audit_record(
        actor=actor,
        action=AuditAction.SIGNING_KEY_REVOKED,
        summary=f"Revoked signing key {locked.key_id} of {locked.user.get_username()}",
        changes={"user": locked.user.get_username(), "key_id": locked.key_id},
    )
    return locked


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


def active_key(user: User) -> SigningKey | None:
    return SigningKey.objects.filter(user=user, retired_at__isnull=True).first()


def signing_key(user: User) -> SigningKey | None:
    """The key a new statement by `user` must be signed with: their active key, unless it is
    legacy (held by the workbench) or revoked."""
    key = active_key(user)
    if key is None or key.origin == SigningKey.Origin.LEGACY or key.revoked_at is not None:
        return None
    return key


def key_by_id(kid: str) -> SigningKey | None:
    return SigningKey.objects.select_related("user").filter(key_id=kid).first()


def all_keys() -> Iterable[SigningKey]:
    return SigningKey.objects.select_related("user").order_by("user__username", "-created_at")


def may_hold_key(user: Actor) -> bool:
    """Whether a person may register a signing key: only who may sign something, a publisher
    or an approver (`key_roles`). A viewer never signs, so a key of theirs could only be a
    key the verifier must refuse."""
    return bool(user.is_authenticated and user.is_active and key_roles(user))


def key_roles(user: User) -> list[str]:
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


def _holds_on_some_type(user: User, codename: str) -> bool:
    return _types_held(user, codename).exists()


def _types_held(user: User, codename: str) -> Any:
    """The decision types on which the person holds the object permission, as the workbench's
    own checks read it (`user.has_perm(perm, decision_type)`): granted to them or a group of
    theirs on that type, every type for a superuser, never a site-wide grant."""
    return get_objects_for_user(
        user, f"contracts.{codename}", klass=DecisionType, accept_global_perms=False
    )


def key_types(user: User) -> dict[str, list[str]]:
    """The decision types (keys) the person's keys may sign a bundle of, per role, from their
    roles on each type now: `publish` the types they own, `approve` the types they review
    (every type for a superuser). What `key_roles` grants site-wide is not enough: the owner
    of one type may not publish another, nor its reviewer approve it."""
    return {
        role: sorted(_types_held(user, perm).values_list("key", flat=True))
        for role, perm in (("publish", roles.EDIT), ("approve", roles.REVIEW))
    }


def key_set_entries() -> list[dict[str, Any]]:
    """Every key this workbench knows (retired ones too), with its owner, roles and the
    decision types of each role, in the shape `compiler_trust.key_set_json` writes."""
    keys = list(all_keys())
    grants = _grants({key.user for key in keys})
    return [
        {
            "person": key.user.get_username(),
            **grants[key.user_id],
            "retired": not key.is_active,
            "origin": key.origin,
            "valid_from": _iso(key.created_at),
            "revoked_at": _iso(key.revoked_at),
            "public_key": key.public_key_pem,
        }
        for key in keys
    ]


def _grants(people: set[User]) -> dict[int, dict[str, Any]]:
    """`key_roles` and `key_types` of each of `people`, read for all of them at once (a few
    queries whatever their number) rather than person by person: publishing and every
    bundle import read the whole key set."""
    every_type = dict(DecisionType.objects.values_list("pk", "key"))
    groups: dict[int, set[int]] = {person.pk: set() for person in people}
    group_names: dict[int, str] = {}
    memberships = get_user_model().groups.through.objects.filter(user_id__in=groups)
    for user_id, group_id, name in memberships.values_list("user_id", "group_id", "group__name"):
        groups[user_id].add(group_id)
        group_names[group_id] = name
    content_type = ContentType.objects.get_for_model(DecisionType)
    held: dict[str, dict[int, set[str]]] = {}
    for role, codename in (("publish", roles.EDIT), ("approve", roles.REVIEW)):
        grants = {"permission__content_type": content_type, "permission__codename": codename}
        by_group: dict[int, set[str]] = {}
        for group_id, pk in GroupObjectPermission.objects.filter(
            group_id__in=group_names, **grants
        ).values_list("group_id", "object_pk"):
            by_group.setdefault(group_id, set()).add(pk)
        by_user: dict[int, set[str]] = {user_id: set() for user_id in groups}
        for user_id, pk in UserObjectPermission.objects.filter(
            user_id__in=groups, **grants
        ).values_list("user_id", "object_pk"):
            by_user[user_id].add(pk)
        held[role] = {
            user_id: {
                key
                for pk, key in every_type.items()
                if str(pk) in pks.union(*(by_group.get(g, ()) for g in groups[user_id]))
            }
            for user_id, pks in by_user.items()
        }
    site_groups = {"publish": roles.POLICY_OWNERS, "approve": roles.RISK_REVIEWERS}
    result: dict[int, dict[str, Any]] = {}
    for person in people:
        if person.is_superuser:
            types = {role: set(every_type.values()) for role in site_groups}
        else:
            types = {role: held[role][person.pk] for role in site_groups}
        names = {group_names[g] for g in groups[person.pk]}
        result[person.pk] = {
            "roles": [
                role
                for role, group in site_groups.items()
                if person.is_superuser or group in names or types[role]
            ],
            "publish_types": sorted(types["publish"]),
            "approve_types": sorted(types["approve"]),
        }
    return result


def trusted_public_keys(*, new_type: str | None = None) -> dict[str, TrustedKey]:
    """Every key this workbench knows, retired ones included, by key id, with its owner, the
    roles `key_roles` gives them now and the types `key_types` scopes them to: what
    publishing and import verify against, and what `export_public_keys` writes.

    `new_type`, a decision type this workbench does not have yet (an import creates it), has
    nobody's role on it to read: it is in the publish scope of keys whose owners may create
    decision types here and in the approve scope of keys whose owners review site-wide
    (*Risk reviewers*, superusers): what they could set up here themselves."""
    trusted: dict[str, TrustedKey] = {}
    site_wide: dict[str, set[str]] = {"publish": set(), "approve": set()}
    if new_type is not None:
        site_wide = _site_wide_signers()
    for entry in key_set_entries():
        public = load_public_key(entry["public_key"])
        person = entry["person"]
        scope = {
            role: frozenset(entry[f"{role}_types"])
            | ({new_type} if new_type and person in site_wide[role] else set())
            for role in ("publish", "approve")
        }
        trusted[key_id(public)] = TrustedKey(
            public, person, frozenset(entry["roles"]), entry["origin"], entry["revoked_at"],
            entry["valid_from"],
            publish_types=scope["publish"], approve_types=scope["approve"],
        )  # fmt: skip
    return trusted


def _site_wide_signers() -> dict[str, set[str]]:
    """Usernames of the people who may create decision types (`publish`) and who review
    across the site (`approve`)."""
    model = get_user_model()
    people, name = model.objects.filter(is_active=True), model.USERNAME_FIELD
    creators = (
        Q(is_superuser=True)
        | Q(groups__permissions__codename="add_decisiontype")
        | Q(user_permissions__codename="add_decisiontype")
    )
    reviewers = Q(is_superuser=True) | Q(groups__name=roles.RISK_REVIEWERS)
    return {
        "publish": set(people.filter(creators).values_list(name, flat=True)),
        "approve": set(people.filter(reviewers).values_list(name, flat=True)),
    }


def _iso(moment: dt.datetime | None) -> str | None:
    return moment.astimezone(dt.UTC).replace(microsecond=0).isoformat() if moment else None


def key_owners() -> dict[str, str]:
    """key id -> username, for `verify_bundle(..., key_owners=...)`."""
    return dict(SigningKey.objects.values_list("key_id", "user__username"))
