"""Ed25519 signing keys for contract bundles: key ids, PEM encoding, key sets, key generation.

This module is kept apart from `compiler_trust._bundle` so that the bundle format stays pure
(no randomness, no file IO). Two things here deliberately step outside the compiler's purity
rule, and each is named for it:

* `generate_key_pair` draws randomness from the operating system. Key generation is the one
  act that must be random; it is called from a management command
  (`python manage.py generate_signing_key USER`), never while building, signing or verifying a
  bundle — Ed25519 signatures themselves are deterministic (RFC 8032), so signing the same
  bundle with the same key always yields the same bytes.
* Reading and writing key files (`load_public_keys`, `write_key_files`,
  `load_private_key_file`) is `compiler_trust._key_files`, beside this module.

Everything here takes and returns bytes or key objects.

The verifier trusts a *key set* (`keys.json`, `key_set_json` / `parse_key_set`): each public
key with the person it belongs to, its roles, `publish` and/or `approve`, and the decision
types it may publish and approve for. A bare public key (PEM, OpenSSH) names none of these, so
it is trusted to sign nothing; a key set of the older format 1 names no types, so its keys sign
nothing either (`TrustedKey.types_for` is None: the verifier says to export it again).

Keys are PEM: private keys as unencrypted (or password-protected) PKCS#8, public keys as
SubjectPublicKeyInfo (`-----BEGIN PUBLIC KEY-----`). `load_public_keys` also accepts OpenSSH
`ssh-ed25519 AAAA…` lines, so a `.pub` file from `ssh-keygen -t ed25519` works too.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

KEY_ID_LENGTH = 16
"""A key id is the first 16 hex digits (64 bits) of sha256 over the raw 32-byte public key."""

PUBLIC_KEY_SUFFIXES = (".pem", ".pub")

KEY_SET_FORMAT = "evidence-workbench.keys/2"
UNSCOPED_KEY_SET_FORMATS = ("evidence-workbench.keys/1",)
"""Key sets read but without decision types: written before a key's roles were scoped to the
types its owner owns or reviews, they say only that a key may publish or approve *something*.
Their keys are loaded (for looking at, and for statements) with `publish_types` and
`approve_types` None, and `verify_bundle` refuses every signature they would have to allow:
reading them as site-wide would let the owner of one type publish another's."""
KEY_SET_FILE = "keys.json"
"""A directory holding this file is read from it alone (the PEM files beside it are for people
and other tools)."""
KEY_ROLES = ("publish", "approve")
"""What a trusted key may sign as: `publish` for a bundle's publisher signature, `approve` for
an approver signature."""
KEY_ORIGINS = ("browser", "cli", "legacy")
"""Where a key's private half lives: generated in the person's browser (WebCrypto, never
extractable), with `evidence-compiler keygen` on their own machine, or `legacy`: generated and
held by the workbench before signatures were made on the person's side. A legacy key proves
only what the workbench recorded; the verifier warns about every signature made with one."""

_PEM_BLOCK = re.compile(rb"-----BEGIN ([A-Z0-9 ]+)-----\r?\n.*?-----END \1-----", re.DOTALL)


class KeyLoadError(ValueError):
    """A key file or PEM text that is not a usable Ed25519 key; the message names the file."""


@dataclass(frozen=True)
class TrustedKey:
    """A public key the verifier trusts, with whom it belongs to and what it may sign as.

    A bare PEM or OpenSSH key says neither: `person` is None and `roles` is empty, so it
    can neither publish nor approve a bundle; a key set (`keys.json`) says both."""

    public_key: Ed25519PublicKey
    person: str | None = None
    roles: frozenset[str] = frozenset()
    origin: str = "legacy"
    revoked_at: str | None = None
    """ISO 8601 with offset: statements signed at or after it are refused, earlier ones stay
    valid with their date."""
    valid_from: str | None = None
    """ISO 8601 with offset, when the key was registered: a statement dated before it is
    refused (a key cannot have signed before it existed). None: not known (a bare key, or a
    key set written before keys carried it)."""
    publish_types: frozenset[str] | None = None
    """The decision types (keys) the key may publish a bundle of; None when the key set does
    not say (a bare key, a format-1 key set), which lets it publish none."""
    approve_types: frozenset[str] | None = None
    """The decision types the key may approve a bundle of; None as for `publish_types`."""

    def types_for(self, role: str) -> frozenset[str] | None:
        """The decision types the key may `role` (`publish` / `approve`) for, None if unsaid."""
        return {"publish": self.publish_types, "approve": self.approve_types}[role]

    @property
    def legacy(self) -> bool:
        return self.origin == "legacy"

    @property
    def key_id(self) -> str:
        return key_id(self.public_key)


# --------------------------------------------------------------------------- identity


def raw_public_bytes(public_key: Ed25519PublicKey) -> bytes:
    return public_key.public_bytes(
        encoding=serialization.Encoding.Raw, format=serialization.PublicFormat.Raw
    )


def key_id(public_key: Ed25519PublicKey | Ed25519PrivateKey) -> str:
    """The key's id: the first 16 hex digits of sha256 over the raw 32-byte public key.

    A private key is accepted for convenience and identified by its public half."""
    if isinstance(public_key, Ed25519PrivateKey):
        public_key = public_key.public_key()
    if not isinstance(public_key, Ed25519PublicKey):
        raise TypeError(f"key_id needs an Ed25519 key, not {type(public_key).__name__}")
    return hashlib.sha256(raw_public_bytes(public_key)).hexdigest()[:KEY_ID_LENGTH]


# --------------------------------------------------------------------------- PEM, in memory


def public_key_pem(public_key: Ed25519PublicKey | Ed25519PrivateKey) -> bytes:
    if isinstance(public_key, Ed25519PrivateKey):
        public_key = public_key.public_key()
    return public_key.public_bytes(
        encoding=serialization.Encoding.PEM,
        format=serialization.PublicFormat.SubjectPublicKeyInfo,
    )


def private_key_pem(private_key: Ed25519PrivateKey, password: bytes | None = None) -> bytes:
    encryption: serialization.KeySerializationEncryption = (
        serialization.BestAvailableEncryption(password)
        if password
        else serialization.NoEncryption()
    )
    return private_key.private_bytes(
        encoding=serialization.Encoding.PEM,
        format=serialization.PrivateFormat.PKCS8,
        encryption_algorithm=encryption,
    )


def load_private_key(
    pem: bytes | str | Ed25519PrivateKey, password: bytes | None = None
) -> Ed25519PrivateKey:
    """An Ed25519 private key from PKCS#8 PEM (a key object is returned unchanged)."""
    if isinstance(pem, Ed25519PrivateKey):
        return pem
    data = pem.encode("ascii") if isinstance(pem, str) else pem
    try:
        key = serialization.load_pem_private_key(data, password=password)
    except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
        raise KeyLoadError(f"not a readable private key: {exc}") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise KeyLoadError(f"the private key is {_kind(key)}, not Ed25519")
    return key


def load_public_key(data: bytes | str) -> Ed25519PublicKey:
    """One Ed25519 public key from PEM (SubjectPublicKeyInfo) or an OpenSSH `ssh-ed25519` line."""
    keys = parse_public_keys(data)
    if len(keys) != 1:
        raise KeyLoadError(f"expected exactly one public key, found {len(keys)}")
    return keys[0]


def parse_public_keys(data: bytes | str) -> list[Ed25519PublicKey]:
    """Every Ed25519 public key in a text: PEM blocks (several may be concatenated) and/or
    OpenSSH `ssh-ed25519 …` lines. A private key is refused rather than silently used."""
    raw = data.encode("ascii", "replace") if isinstance(data, str) else data
    keys: list[Ed25519PublicKey] = []
    for block in _PEM_BLOCK.finditer(raw):
        label = block.group(1).decode("ascii")
        if "PRIVATE" in label:
            raise KeyLoadError(
                "this is a private key; give the verifier the public key "
                "(python manage.py export_public_keys DIR)"
            )
        if label != "PUBLIC KEY":
            raise KeyLoadError(f"unsupported PEM block '{label}' (expected 'PUBLIC KEY')")
        try:
            key = serialization.load_pem_public_key(block.group(0))
        except (ValueError, UnsupportedAlgorithm) as exc:
            raise KeyLoadError(f"unreadable public key: {exc}") from None
        keys.append(_ed25519(key))
    for line in raw.splitlines():
        if line.strip().startswith(b"ssh-"):
            try:
                key = serialization.load_ssh_public_key(line.strip())
            except (ValueError, UnsupportedAlgorithm) as exc:
                raise KeyLoadError(f"unreadable OpenSSH public key: {exc}") from None
            keys.append(_ed25519(key))
    return keys


def _ed25519(key: object) -> Ed25519PublicKey:
    if not isinstance(key, Ed25519PublicKey):
        raise KeyLoadError(f"the public key is {_kind(key)}, not Ed25519")
    return key


def _kind(key: object) -> str:
    return type(key).__name__.lstrip("_")


# --------------------------------------------------------------------------- key sets


def key_set_json(entries: Iterable[Mapping[str, Any]]) -> bytes:
    """A key set file: `{"format", "keys": [{"key_id", "person", "roles", "publish_types",
    "approve_types", "retired", "origin", "valid_from", "revoked_at", "public_key"}]}` with the
    keys in the given order, roles in `KEY_ROLES` order, types sorted (an entry without `origin`
    is `legacy`; one without `publish_types` or `approve_types` may publish or approve no type;
    `valid_from`, when the key was registered, and `revoked_at` are ISO 8601 with an offset, or
    null)."""
    keys = []
    for entry in entries:
        public = load_public_key(entry["public_key"])
        keys.append(
            {
                "key_id": key_id(public),
                "person": entry["person"],
                "roles": [r for r in KEY_ROLES if r in set(entry["roles"])],
                "publish_types": sorted(set(entry.get("publish_types", ()))),
                "approve_types": sorted(set(entry.get("approve_types", ()))),
                "retired": bool(entry.get("retired", False)),
                "origin": entry.get("origin") or "legacy",
                "valid_from": entry.get("valid_from"),
                "revoked_at": entry.get("revoked_at"),
                "public_key": public_key_pem(public).decode("ascii"),
            }
        )
    document = {"format": KEY_SET_FORMAT, "keys": keys}
    return (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


_UNSCOPED_ENTRY_MEMBERS = {
    "key_id", "person", "roles", "retired", "origin", "valid_from", "revoked_at", "public_key"
}  # fmt: skip
_TYPE_MEMBERS = {"publish": "publish_types", "approve": "approve_types"}
_KEY_ENTRY_MEMBERS = _UNSCOPED_ENTRY_MEMBERS | set(_TYPE_MEMBERS.values())


def parse_key_set(data: bytes | str) -> dict[str, TrustedKey]:
    """The trusted keys of a key set file (`key_set_json`), by key id. Each entry's key id
    must be its key's; roles must be among `KEY_ROLES`; a person appears with each key; and
    `publish_types` / `approve_types` list the decision types of each role (both required).
    A format-1 key set (`UNSCOPED_KEY_SET_FORMATS`) has no types: its keys are read with
    None for both, which `verify_bundle` refuses to sign with."""
    try:
        document = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise KeyLoadError(f"not a JSON key set ({exc})") from None
    form = document.get("format") if isinstance(document, dict) else None
    if form not in (KEY_SET_FORMAT, *UNSCOPED_KEY_SET_FORMATS):
        raise KeyLoadError(f"not a key set: it should declare format '{KEY_SET_FORMAT}'")
    scoped = form == KEY_SET_FORMAT
    members = _KEY_ENTRY_MEMBERS if scoped else _UNSCOPED_ENTRY_MEMBERS
    entries = document.get("keys")
    if not isinstance(entries, list) or not entries:
        raise KeyLoadError("the key set has no keys")
    found: dict[str, TrustedKey] = {}
    for index, entry in enumerate(entries):
        where = f"keys[{index}]"
        if not isinstance(entry, dict) or set(entry) - members:
            raise KeyLoadError(f"{where}: an entry has only {sorted(members)}")
        person, roles = entry.get("person"), entry.get("roles")
        if not isinstance(person, str) or not person:
            raise KeyLoadError(f"{where}.person: the key's owner is required")
        if not isinstance(roles, list) or not set(roles) <= set(KEY_ROLES):
            raise KeyLoadError(f"{where}.roles: a list of {', '.join(KEY_ROLES)} (or empty)")
        origin, revoked_at = entry.get("origin", "legacy"), entry.get("revoked_at")
        if origin not in KEY_ORIGINS:
            raise KeyLoadError(f"{where}.origin: one of {', '.join(KEY_ORIGINS)}")
        if revoked_at is not None and not _aware_iso(revoked_at):
            raise KeyLoadError(f"{where}.revoked_at: an ISO 8601 date-time with a UTC offset")
        valid_from = entry.get("valid_from")
        if valid_from is not None and not _aware_iso(valid_from):
            raise KeyLoadError(f"{where}.valid_from: an ISO 8601 date-time with a UTC offset")
        public = load_public_key(str(entry.get("public_key", "")))
        if entry.get("key_id") != key_id(public):
            raise KeyLoadError(
                f"{where}.key_id: {entry.get('key_id')!r} is not the id of its public key "
                f"({key_id(public)})"
            )
        types = {role: _types(entry, where, member) if scoped else None
                 for role, member in _TYPE_MEMBERS.items()}  # fmt: skip
        found[key_id(public)] = TrustedKey(
            public, person, frozenset(roles), origin, revoked_at, valid_from,
            publish_types=types["publish"], approve_types=types["approve"],
        )  # fmt: skip
    return found


def _types(entry: Mapping[str, Any], where: str, member: str) -> frozenset[str]:
    value = entry.get(member)
    if not isinstance(value, list) or not all(isinstance(t, str) and t for t in value):
        raise KeyLoadError(
            f"{where}.{member}: a list of decision type keys (empty if none) is required"
        )
    return frozenset(value)


def _aware_iso(value: object) -> bool:
    try:
        return isinstance(value, str) and dt.datetime.fromisoformat(value).tzinfo is not None
    except ValueError:
        return False


# --------------------------------------------------------------------------- generation (random)


def generate_key_pair(password: bytes | None = None) -> tuple[bytes, bytes]:
    """A fresh Ed25519 key pair as `(private_pem, public_pem)`.

    The only function in the compiler that reads a random source (the OS CSPRNG, through
    `cryptography`): a key must be unpredictable. It is meant for the `generate_signing_key`
    management command; nothing in bundle building, signing or verifying calls it."""
    private = Ed25519PrivateKey.generate()
    return private_key_pem(private, password), public_key_pem(private)
