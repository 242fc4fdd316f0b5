"""Making a bundle: signed here with the signatories' keys (`sign_bundle`), or assembled
from statements signed on the people's side (`assemble_bundle`).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from pydantic import ValidationError

from compiler._canonical import sha256_hex
from compiler_trust._bundle.checks import _check_four_eyes, _check_signature_set, _check_statement
from compiler_trust._bundle.document import Bundle, Role, Signer
from compiler_trust._bundle.hashing import bundle_body_hash, normalise_body, signed_message
from compiler_trust._bundle.reasons import (
    APPROVER_WITHOUT_SIGNATURE,
    NO_PUBLISHER_SIGNATURE,
    PUBLISHER_IS_NOT_THE_SIGNER,
    SIGNATURE_ALGORITHM,
    BundleInvalid,
    Problem,
    _names,
    _schema_error,
)
from compiler_trust._keys import KeyLoadError, key_id, load_private_key
from compiler_trust._statements import SignedStatement


def sign_bundle(body: Mapping[str, Any], signers: Sequence[Signer]) -> dict[str, Any]:
    """The complete bundle: the normalised body, its `sha256`, and one signature per signer.

    `signers` are `(username, "publisher" | "approver", private key)`; the key is an
    `Ed25519PrivateKey` or its PKCS#8 PEM. Exactly one publisher and every manifest approver
    must sign. If the manifest has no `publisher`, the publisher signer is written into it;
    a publisher or approver entry without a `key_id` gets its signer's (before hashing, so
    it is signed). Signatures are ordered publisher first, then approvers by name. Raises
    `BundleInvalid` for a body or a set of signers that `verify_bundle` would refuse (the
    trusted key set's roles aside)."""
    keys: list[tuple[str, Role, Ed25519PrivateKey]] = []
    for name, role, private in signers:
        try:
            keys.append((name, role, load_private_key(private)))
        except KeyLoadError as exc:
            raise BundleInvalid(f"the key of '{name}' ({role}): {exc}", Problem.SCHEMA) from None
    normal = normalise_body(_with_signer_keys(body, keys))
    digest = bundle_body_hash(normal)

    entries: list[dict[str, str]] = []
    for name, role, key in keys:
        signature = key.sign(signed_message(digest))
        entries.append(
            {
                "signer": name,
                "role": role,
                "key_id": key_id(key),
                "algorithm": SIGNATURE_ALGORITHM,
                "signature": base64.b64encode(signature).decode("ascii"),
            }
        )
    return _sealed(normal, digest, entries)[0]


def _sealed(
    normal: dict[str, Any], digest: str, entries: list[dict[str, Any]]
) -> tuple[dict[str, Any], Bundle]:
    """The bundle of `normal` with its signature entries in their one order (the publisher's
    first, then by signer and key), checked: the schema, four eyes, the set of signatures."""
    entries.sort(key=lambda e: (e["role"] != "publisher", e["signer"], e["key_id"]))
    bundle = {**normal, "sha256": digest, "signatures": entries}
    try:
        model = Bundle.model_validate(bundle)
    except ValidationError as exc:
        raise _schema_error(exc, "the signatures are invalid") from None
    _check_four_eyes(model.manifest)
    _check_signature_set(model)
    return bundle, model


def _with_signer_keys(
    body: Mapping[str, Any], keys: Sequence[tuple[str, Role, Ed25519PrivateKey]]
) -> Any:
    """The body with the publisher (when missing) and the signers' key ids written into the
    manifest entries that lack one. Anything unexpected is left for validation to report."""
    if not isinstance(body, Mapping) or not isinstance(body.get("manifest"), Mapping):
        return body
    manifest = dict(body["manifest"])
    ids: dict[tuple[str, Role], str] = {(name, role): key_id(key) for name, role, key in keys}
    publishers = [name for name, role, _ in keys if role == "publisher"]
    if "publisher" not in manifest and len(publishers) == 1:
        manifest["publisher"] = {"person": publishers[0]}

    def signed(entry: Any, role: Role) -> Any:
        # A person that is not a string (a list, an object, a number, null) cannot be a
        # signer's name: validation refuses it, naming the field.
        if not isinstance(entry, Mapping) or "key_id" in entry:
            return entry
        if not isinstance(entry.get("person"), str):
            return entry
        found = ids.get((entry["person"], role))
        if found is not None:
            return {**entry, "key_id": found}
        if role == "approver":
            reason = APPROVER_WITHOUT_SIGNATURE.format(person=entry.get("person"))
        elif publishers:
            reason = PUBLISHER_IS_NOT_THE_SIGNER.format(
                signer=_names(publishers), publisher=entry.get("person")
            )
        else:
            reason = NO_PUBLISHER_SIGNATURE
        raise BundleInvalid(reason, Problem.SIGNATURES)

    if "publisher" in manifest:
        manifest["publisher"] = signed(manifest["publisher"], "publisher")
    if isinstance(manifest.get("approvers"), list | tuple):
        manifest["approvers"] = [signed(a, "approver") for a in manifest["approvers"]]
    return {**body, "manifest": manifest}


def assemble_bundle(
    body: Mapping[str, Any],
    publication: SignedStatement,
    approvals: Sequence[SignedStatement],
) -> dict[str, Any]:
    """The complete bundle from statements signed on the people's side: the normalised body
    (whose manifest names every signatory with their key), its `sha256`, and one signature
    entry per statement carrying the statement. Nothing is signed here; the publication
    statement must sign this body's sha256. Raises `BundleInvalid` for a body or a set of
    statements `verify_bundle` would refuse (keys aside)."""
    normal = normalise_body(body)
    digest = bundle_body_hash(normal)
    entries: list[dict[str, Any]] = []
    for role, signed in [("publisher", publication)] + [("approver", a) for a in approvals]:
        statement = signed.statement
        entries.append(
            {
                "signer": statement.signer,
                "role": role,
                "key_id": statement.key_id,
                "algorithm": SIGNATURE_ALGORITHM,
                "statement": statement.model_dump(mode="json"),
                "signature": signed.signature,
            }
        )
    bundle, model = _sealed(normal, digest, entries)
    contract_sha256 = sha256_hex(normal["contract"])
    for index, sig in enumerate(model.signatures):
        _check_statement(index, sig, model, contract_sha256)
    return bundle
