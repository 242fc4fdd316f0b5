"""What a bundle's sha256 covers, what a signature signs, and the canonical file form."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from compiler._canonical import canonical_bytes, sha256_hex
from compiler_trust._bundle.document import BundleBody, VerifiedBundle
from compiler_trust._bundle.reasons import UNSIGNED_MEMBERS, BundleInvalid, Problem, _schema_error


def bundle_body(document: Mapping[str, Any]) -> dict[str, Any]:
    """The members the hash covers: all but `sha256` and `signatures`."""
    return {k: v for k, v in document.items() if k not in UNSIGNED_MEMBERS}


def bundle_body_hash(body: Mapping[str, Any]) -> str:
    """Hex sha256 of the RFC 8785 canonical form of the body. Given a whole bundle, its
    `sha256` and `signatures` are left out first, so both forms give the same hash."""
    return sha256_hex(bundle_body(body))


def signed_message(sha256: str) -> bytes:
    """What each Ed25519 signature signs: the 64 ASCII bytes of the hex digest."""
    return sha256.encode("ascii")


def normalise_body(body: Mapping[str, Any]) -> dict[str, Any]:
    """The body as it is signed: validated, every default written out, approvers, source
    classes and (format 2) scenarios sorted, so that the same content always hashes the same.
    A format-3 body names its test suite in `manifest.tests` (`split_suite` makes both)."""
    if not isinstance(body, Mapping):
        raise BundleInvalid("a bundle body is a JSON object", Problem.FORMAT)
    stray = [k for k in UNSIGNED_MEMBERS if k in body]
    if stray:
        raise BundleInvalid(
            f"the body already carries {' and '.join(stray)}; pass the body only",
            Problem.SCHEMA,
        )
    try:
        model = BundleBody.model_validate(dict(body))
    except ValidationError as exc:
        raise _schema_error(exc, "the bundle body is invalid") from None
    return model.body_json()


def serialize_bundle(bundle: Mapping[str, Any] | VerifiedBundle) -> bytes:
    """The file form: RFC 8785 canonical JSON of the whole bundle plus one `\\n`.

    Canonical rather than pretty so that there is exactly one byte sequence per bundle: export
    twice gives identical bytes, and verification can insist on it (`jq .` shows it pretty)."""
    document = bundle.document if isinstance(bundle, VerifiedBundle) else bundle
    return canonical_bytes(document) + b"\n"
