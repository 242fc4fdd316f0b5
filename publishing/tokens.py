"""Service tokens: how a production service authenticates to `/api/v1/`.

An owner of a decision type creates a token for one or more of the types they own. The
secret (`ewt_` and 43 URL-safe characters) is returned once by `token_create` and never
stored: the row keeps its sha256 and its first characters (`prefix`) to name it. A revoked
token, or one whose owner was deactivated, authorises nothing (401); one whose owner no longer
holds the role a call needs on the type (`TOKEN_NEEDS`, asked at every call) is refused it
(403, `CreatorLost`). Creating and revoking are written to the audit log; each API call is
one `ApiCall` row (`record_call`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from collections.abc import Iterable, Sequence

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from guardian.core import ObjectPermissionChecker
from guardian.shortcuts import get_objects_for_user

from compiler_trust import key_set_json
from contracts import roles, selectors
from contracts.models import Bundle, BundleTestSuite, DecisionType
from contracts.services import NOT_ALLOWED, Actor, audit_record

from . import signing
from .models import ApiCall, ServiceToken

SECRET_PREFIX = "ewt_"
PREFIX_LENGTH = len(SECRET_PREFIX) + 8
# last_used_at is refreshed at most this often, so a busy token costs no write per call.
LAST_USED_RESOLUTION = dt.timedelta(minutes=1)

TOKEN_CREATED = "service_token.created"
TOKEN_REVOKED = "service_token.revoked"

# Messages tests assert on.
NO_TYPES = "Choose at least one decision type the token may read."
NOT_OWNER = "You can create a token only for decision types you own; you do not own {keys}."
NAME_REQUIRED = "Give the token a name that says which service uses it."
ALREADY_REVOKED = "Token {prefix}… was already revoked."
CREATOR_LOST = (
    "Token {prefix}… acts for the person who created it, who no longer holds a role on '{key}'"
    " that allows {what}: an owner of '{key}' must create a new token."
)
CREATOR_LOST_ALL = (
    "Token {prefix}… acts for the person who created it, who no longer holds a role on any of"
    " its decision types that allows {what}: an owner must create a new token."
)

# What a token does, and the role its creator must still hold on the type, at every call, for
# it to do it: a token never does more than the person who made it may now. Reading a bundle
# is a viewer's right; recording receipts is what creating the token needed (an owner's).
READ = "read"
RECORD = "record"
TOKEN_NEEDS: dict[str, tuple[str, str]] = {
    READ: (roles.VIEW, "reading its bundles (viewer or above)"),
    RECORD: (roles.EDIT, "recording its decisions (owner)"),
}


class CreatorLost(PermissionDenied):
    """The token's creator may no longer do this with (one of) the token's types: 403."""


def secret_sha256(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def _new_secret() -> str:
    while True:
        secret = SECRET_PREFIX + secrets.token_urlsafe(32)
        # A prefix is unique; drawing one that is taken is vanishingly rare, draw again.
        if not ServiceToken.objects.filter(prefix=secret[:PREFIX_LENGTH]).exists():
            return secret


# --------------------------------------------------------------------------- services


@transaction.atomic
def token_create(
    *, actor: Actor, name: str, decision_types: Iterable[DecisionType]
) -> tuple[ServiceToken, str]:
    """A new token for `decision_types`, all of which `actor` must own, and its secret: the
    only time the secret is known."""
    if not actor.is_authenticated:
        raise PermissionDenied(NOT_ALLOWED)
    types = sorted(set(decision_types), key=lambda t: t.key)
    name = name.strip()
    if not name:
        raise ValidationError({"name": NAME_REQUIRED})
    if not types:
        raise ValidationError({"decision_types": NO_TYPES})
    not_owned = [t.key for t in types if not selectors.can_edit(user=actor, decision_type=t)]
    if not_owned:
        raise PermissionDenied(NOT_OWNER.format(keys=", ".join(not_owned)))
    secret = _new_secret()
    token = ServiceToken.objects.create(
        name=name[:120],
        owner=actor,
        prefix=secret[:PREFIX_LENGTH],
        secret_sha256=secret_sha256(secret),
    )
    token.decision_types.set(types)
    for decision_type in types:
        audit_record(
            actor=actor,
            action=TOKEN_CREATED,
            decision_type=decision_type,
            summary=f"Created service token '{token.name}' ({token.prefix}…)",
            changes={"token": token.prefix, "types": [t.key for t in types]},
        )
    return token, secret


def may_revoke(user: Actor, token: ServiceToken) -> bool:
    return user.is_authenticated and (user.pk == token.owner_id or user.is_superuser)


@transaction.atomic
def token_revoke(*, actor: Actor, token: ServiceToken) -> ServiceToken:
    """Revoke `token` (its owner or a superuser): every later call with it answers 401."""
    token = ServiceToken.objects.select_for_update().get(pk=token.pk)
    if not may_revoke(actor, token):
        raise PermissionDenied(NOT_ALLOWED)
    if token.is_revoked:
        raise ValidationError(ALREADY_REVOKED.format(prefix=token.prefix))
    token.revoked_at = timezone.now()
    token.revoked_by = actor
    token.save(update_fields=["revoked_at", "revoked_by"])
    for decision_type in token.decision_types.all():
        audit_record(
            actor=actor,
            action=TOKEN_REVOKED,
            decision_type=decision_type,
            summary=f"Revoked service token '{token.name}' ({token.prefix}…)",
            changes={"token": token.prefix},
        )
    return token


def authenticate(secret: str) -> ServiceToken | None:
    """The usable token whose secret this is, with its decision type ids loaded, or None.
    Looked up by the secret's sha256, so the comparison reveals nothing about near misses."""
    if not secret.startswith(SECRET_PREFIX):
        return None
    token = (
        ServiceToken.objects.usable()
        .filter(secret_sha256=secret_sha256(secret))
        .select_related("owner")
        .first()
    )
    if token is None:
        return None
    token.type_ids = frozenset(token.decision_types.values_list("pk", flat=True))  # type: ignore[attr-defined]
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_RESOLUTION:
        ServiceToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
    return token


def creator_allows(token: ServiceToken, decision_type: DecisionType, does: str) -> bool:
    """Whether the token's creator, as they are now, may do `does` (`READ`, `RECORD`) with
    `decision_type`: still active and still holding the role it needs (`TOKEN_NEEDS`)."""
    owner = token.owner
    codename, _what = TOKEN_NEEDS[does]
    return bool(owner.is_active and owner.has_perm(f"contracts.{codename}", decision_type))


def creator_lost(token: ServiceToken, decision_type: DecisionType, does: str) -> str:
    """Why the token may not do `does` with `decision_type` any more ("" if it may). Names
    only the type asked for, which is in the token's scope."""
    if creator_allows(token, decision_type, does):
        return ""
    return CREATOR_LOST.format(prefix=token.prefix, key=decision_type.key,
                               what=TOKEN_NEEDS[does][1])  # fmt: skip


def allowed_types(token: ServiceToken, does: str) -> list[DecisionType]:
    """The token's decision types its creator still allows it to `does` with, by key;
    `CreatorLost` if there is none (the token then authorises nothing of the kind)."""
    scoped = list(scoped_types(token=token))
    allowed = [t for t in scoped if creator_allows(token, t, does)]
    if scoped and not allowed:
        raise CreatorLost(CREATOR_LOST_ALL.format(prefix=token.prefix, what=TOKEN_NEEDS[does][1]))
    return allowed


def record_call(
    *, token: ServiceToken | None, endpoint: str, decision_type_key: str = "", status: int
) -> None:
    ApiCall.objects.create(
        token=token, endpoint=endpoint[:200], decision_type_key=decision_type_key[:120],
        status=status,
    )  # fmt: skip


# --------------------------------------------------------------------------- selectors


def tokens_for_user(*, user: Actor) -> QuerySet[ServiceToken]:
    """The tokens a person manages: their own (a superuser: every token)."""
    if not user.is_authenticated:
        return ServiceToken.objects.none()
    tokens = ServiceToken.objects.select_related("owner").prefetch_related("decision_types")
    return tokens if user.is_superuser else tokens.filter(owner=user)


def _checker_allows(
    checker: ObjectPermissionChecker, decision_type: DecisionType, does: str
) -> bool:
    """`creator_allows` through a checker that holds the creator's roles (an inactive
    creator's checker allows nothing)."""
    return checker.has_perm(TOKEN_NEEDS[does][0], decision_type)


def with_standing(rows: Sequence[ServiceToken]) -> Sequence[ServiceToken]:
    """`rows` (a page of `tokens_for_user`), each with what its creator no longer allows it,
    by type key: `refused_keys` (no read either) and `read_only_keys` (reads, records no
    receipt). The same test as `creator_allows`, with each creator's roles on the page's
    types read once rather than once a token and type."""
    types = {t.pk: t for token in rows for t in token.decision_types.all()}
    checkers: dict[int, ObjectPermissionChecker] = {}
    for token in rows:
        token.refused_keys, token.read_only_keys = [], []  # type: ignore[attr-defined]
        if token.is_revoked:
            continue
        checker = checkers.get(token.owner_id)
        if checker is None:
            checker = checkers[token.owner_id] = ObjectPermissionChecker(token.owner)
            if types:
                # A list of objects is what guardian reads (its stub says QuerySet only).
                checker.prefetch_perms(list(types.values()))  # type: ignore[arg-type]
        for decision_type in token.decision_types.all():
            if not _checker_allows(checker, decision_type, READ):
                token.refused_keys.append(decision_type.key)  # type: ignore[attr-defined]
            elif not _checker_allows(checker, decision_type, RECORD):
                token.read_only_keys.append(decision_type.key)  # type: ignore[attr-defined]
    return rows


def token_for_user(*, user: Actor, pk: int) -> ServiceToken:
    try:
        return tokens_for_user(user=user).get(pk=pk)
    except ServiceToken.DoesNotExist:
        raise ServiceToken.DoesNotExist("No such token.") from None


def types_for_tokens(*, user: User) -> QuerySet[DecisionType]:
    """The decision types a person may create a token for: those they own."""
    if not user.is_authenticated:
        return DecisionType.objects.none()
    return get_objects_for_user(user, f"contracts.{roles.EDIT}", klass=DecisionType)


def recent_calls(*, token: ServiceToken, limit: int = 20) -> QuerySet[ApiCall]:
    return token.calls.order_by("-at", "-id")[:limit]


# --------------------------------------------------------------------------- what a token reads


def scoped_type(*, token: ServiceToken, key: str) -> DecisionType | None:
    """The decision type `key` if the token may read it; None both for a type outside its
    scope and for one that does not exist, so an answer reveals nothing of other types."""
    type_ids = getattr(token, "type_ids", None)
    if type_ids is None:
        type_ids = frozenset(token.decision_types.values_list("pk", flat=True))
    return DecisionType.objects.filter(key=key, pk__in=type_ids).first()


def scoped_types(*, token: ServiceToken) -> QuerySet[DecisionType]:
    return DecisionType.objects.filter(pk__in=token.decision_types.values("pk")).order_by("key")


def latest_bundle(decision_type: DecisionType) -> Bundle | None:
    """The bundle of the type's published version (none once it is retired)."""
    return (
        Bundle.objects.filter(decision_type=decision_type, version__status="published")
        .select_related("version")
        .first()
    )


def bundle_of_version(decision_type: DecisionType, number: int) -> Bundle | None:
    return (
        Bundle.objects.filter(decision_type=decision_type, version__number=number)
        .select_related("version")
        .first()
    )


def suite_of(bundle: Bundle) -> BundleTestSuite | None:
    """The bundle's test suite (format 3), when this workbench holds it."""
    return BundleTestSuite.objects.filter(bundle=bundle).first()


def signer_key_set(decision_type: DecisionType) -> bytes:
    """The key set (`compiler_trust.key_set_json`, what `load_public_keys` reads) of the keys
    that signed the type's bundles, with each owner's roles now and their types narrowed to
    this one: a token for one type learns nothing of the others (not even their keys), and
    verifying this type's bundles needs nothing more."""
    signed = {
        signature["key_id"]
        for bundle in Bundle.objects.filter(decision_type=decision_type).only("content")
        for signature in bundle.document["signatures"]
    }
    entries = [
        {
            **entry,
            **{
                member: [t for t in entry[member] if t == decision_type.key]
                for member in ("publish_types", "approve_types")
            },
        }
        for key, entry in zip(signing.all_keys(), signing.key_set_entries(), strict=True)
        if key.key_id in signed
    ]
    return key_set_json(entries)
