"""Checking a bundle: strict parsing, integrity without keys (`inspect_bundle`), and every
signature against a trusted key set (`verify_bundle`).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from pydantic import ValidationError

from compiler._canonical import sha256_hex
from compiler_trust._bundle.checks import (
    _check_four_eyes,
    _check_key_roles,
    _check_signature_set,
    _check_statement,
    _trusted_key,
)
from compiler_trust._bundle.document import Bundle, VerifiedBundle
from compiler_trust._bundle.hashing import bundle_body_hash, serialize_bundle, signed_message
from compiler_trust._bundle.reasons import (
    BADLY_DATED,
    LEGACY_SIGNATURE,
    OUTDATED_FORMAT,
    OUTDATED_FORMATS,
    READ_FORMATS,
    REVOKED_KEY,
    TOO_FEW_APPROVALS,
    UNSTATED_SIGNATURE,
    BundleInvalid,
    Problem,
    _json_type,
    _schema_error,
    read_formats,
)
from compiler_trust._keys import TrustedKey
from compiler_trust._statements import (
    MAX_CLOCK_SKEW,
    aware_datetime,
    signing_date_problem,
    statement_bytes,
)

PublicKeys = Mapping[str, TrustedKey | Ed25519PublicKey | bytes | str]


def verify_bundle(
    document: bytes | bytearray | str | Mapping[str, Any],
    public_keys: PublicKeys,
    *,
    key_owners: Mapping[str, str] | None = None,
    require_approvals: int = 1,
    now: dt.datetime | None = None,
    skew: dt.timedelta = MAX_CLOCK_SKEW,
) -> VerifiedBundle:
    """Check a bundle and return it validated, or raise `BundleInvalid` with the reason.

    `document` is the file's bytes (or text), or an already-parsed JSON object. Bytes must
    be exactly `serialize_bundle`'s form: strict UTF-8, I-JSON (no duplicate keys, no NaN),
    RFC 8785 canonical, one trailing newline. `public_keys` maps key id -> trusted key:
    `load_public_keys(path)`'s `TrustedKey`s, which name each key's person, roles and the
    decision types of each role (a bare public key or PEM is trusted with none of them, and
    so can sign nothing). Each
    signature's signer must be its key's person; `key_owners` (key id -> username), if
    given, says who owns which key instead.

    Checks, in order: parses; is a bundle of this format (an outdated one is refused with
    its own reason); `sha256` matches the contents (else "the bundle was altered"); the
    schema; four eyes in the signed manifest (no approver is the publisher or an editor, or
    is named with their key); every signature is by a trusted key, its owner's, and valid;
    one publisher signature by the manifest's publisher and one approver signature by each
    manifest approver, each with the key the manifest names, and no others; the key set
    lets the publisher's key publish and each approval key approve, the manifest's decision
    type among the types of that role (a key set that names no types, format 1, lets
    neither); at least
    `require_approvals` approvals (the verifier's policy); finally, for bytes,
    that they are exactly the canonical form (so a change the JSON parser would not notice
    still fails).

    A signature with a `statement` signs that statement, which must be the bundle's (its
    contract sha256, the manifest's report, the bundle's sha256 for the publication) and be
    dated before its key's `revoked_at`, if any. Every signature's date (its statement's
    `signed_at`, or the manifest's `published_at` for one without) must be on or after its
    key's `valid_from`, if the key set gives it, and, when the caller gives `now` (the
    compiler has no clock: the command line reads it), no later than `now` plus `skew`.
    A signature without one (the workbench's
    own, before statements) is accepted only from a `legacy` key; every signature by a legacy
    key is named in `VerifiedBundle.warnings`."""
    data, parsed, model = _integrity(document)
    trusted = {kid: _trusted_key(kid, key) for kid, key in public_keys.items()}
    contract_sha256 = sha256_hex(parsed["contract"])
    warnings: list[str] = []
    for index, sig in enumerate(model.signatures):
        who = f"'{sig.signer}' ({sig.role}, key {sig.key_id})"
        entry = trusted.get(sig.key_id)
        if entry is None:
            raise BundleInvalid(
                f"unknown key: signatures[{index}] by {who} was made with a key that is not "
                f"among the {len(trusted)} trusted public key(s)",
                Problem.UNKNOWN_KEY,
            )
        key = entry.public_key
        owner = key_owners.get(sig.key_id) if key_owners is not None else entry.person
        if (key_owners is not None or owner is not None) and owner != sig.signer:
            raise BundleInvalid(
                f"signatures[{index}] claims to be by '{sig.signer}', but key {sig.key_id} "
                + (f"belongs to '{owner}'" if owner else "has no known owner"),
                Problem.WRONG_SIGNER,
            )
        facts = {"index": index, "signer": sig.signer, "role": sig.role, "key_id": sig.key_id}
        if sig.statement is None:
            if not entry.legacy:
                raise BundleInvalid(UNSTATED_SIGNATURE.format(**facts), Problem.STATEMENT)
            message, signed_at = signed_message(model.sha256), model.manifest.published_at
        else:
            _check_statement(index, sig, model, contract_sha256)
            message, signed_at = statement_bytes(sig.statement), sig.statement.signed_at
        if entry.legacy:
            warnings.append(LEGACY_SIGNATURE.format(**facts))
        if entry.revoked_at is not None and aware_datetime(signed_at) >= aware_datetime(
            entry.revoked_at
        ):
            raise BundleInvalid(
                REVOKED_KEY.format(**facts, signed_at=signed_at, revoked_at=entry.revoked_at),
                Problem.REVOKED,
            )
        problem = signing_date_problem(
            signed_at, key_id=sig.key_id, valid_from=entry.valid_from, now=now, skew=skew
        )
        if problem is not None:
            raise BundleInvalid(BADLY_DATED.format(**facts, problem=problem), Problem.DATED)
        try:
            key.verify(sig.raw, message)
        except InvalidSignature:
            signs = "its statement" if sig.statement is not None else "this bundle's sha256"
            raise BundleInvalid(
                f"bad signature by {who}: it does not sign {signs} "
                + (f"{model.sha256}" if sig.statement is None else "as written"),
                Problem.BAD_SIGNATURE,
            ) from None
    _check_signature_set(model)
    _check_key_roles(model, trusted)
    approvals = sum(1 for sig in model.signatures if sig.role == "approver")
    if approvals < require_approvals:
        raise BundleInvalid(
            TOO_FEW_APPROVALS.format(count=approvals, required=require_approvals), Problem.POLICY
        )
    _check_file_form(data, parsed)
    return VerifiedBundle(bundle=model, document=parsed, warnings=tuple(warnings))


def inspect_bundle(document: bytes | bytearray | str | Mapping[str, Any]) -> Bundle:
    """Integrity only, for looking at a bundle: it parses, has this format, its sha256
    matches its contents, it fits the schema, its signatures name the manifest's people and
    (for bytes) it is in the canonical file form. The signatures are NOT verified against
    any key, so nothing here says who made it: never compile production requests against
    an inspected bundle; use `verify_bundle`."""
    data, parsed, model = _integrity(document)
    _check_signature_set(model)
    _check_file_form(data, parsed)
    return model


def _integrity(
    document: bytes | bytearray | str | Mapping[str, Any],
) -> tuple[bytes | None, dict[str, Any], Bundle]:
    """Parse, format, hash, schema: everything that needs no key."""
    data: bytes | None = None
    if isinstance(document, bytes | bytearray | memoryview):
        data = bytes(document)
        parsed = parse_bundle_bytes(data)
    elif isinstance(document, str):
        data = document.encode("utf-8", "surrogatepass")
        parsed = parse_bundle_bytes(data)
    else:
        parsed = document
    if not isinstance(parsed, Mapping):
        raise BundleInvalid(f"a bundle is a JSON object, not {_json_type(parsed)}", Problem.FORMAT)
    parsed = dict(parsed)

    form = parsed.get("format")
    if form in OUTDATED_FORMATS:
        raise BundleInvalid(
            OUTDATED_FORMAT.format(found=form, expected=read_formats()), Problem.OUTDATED
        )
    if form not in READ_FORMATS:
        try:
            shown = "no format" if form is None else f"format {json.dumps(form)}"
        except (TypeError, ValueError, RecursionError):  # a parsed document of Python objects
            shown = f"a format that is {_json_type(form)}, not JSON"
        raise BundleInvalid(
            f"unsupported bundle: it declares {shown}; this compiler reads {read_formats()}",
            Problem.FORMAT,
        )
    claimed = parsed.get("sha256")
    if not isinstance(claimed, str):
        raise BundleInvalid("the bundle carries no sha256 string", Problem.SCHEMA)
    try:
        actual = bundle_body_hash(parsed)
    except (ValueError, TypeError, RecursionError) as exc:  # rfc8785 errors, lone surrogates
        raise BundleInvalid(
            f"malformed bundle: not representable as RFC 8785 JSON ({exc})", Problem.MALFORMED
        ) from None
    if actual != claimed:
        raise BundleInvalid(
            f"the bundle was altered: sha256 {claimed} does not match its contents "
            f"(which hash to {actual})",
            Problem.ALTERED,
        )
    try:
        model = Bundle.model_validate(parsed)
    except ValidationError as exc:
        raise _schema_error(exc, f"the bundle does not match the {form} schema") from None
    _check_four_eyes(model.manifest)
    return data, parsed, model


def _check_file_form(data: bytes | None, parsed: Mapping[str, Any]) -> None:
    # Last: everything that was signed is intact, so only the file's bytes can be off.
    if data is not None and data != serialize_bundle(parsed):
        raise BundleInvalid(
            "the bundle file was altered: its contents and signatures are intact, but its "
            "bytes are not the canonical form it was exported in (RFC 8785 JSON and one "
            "newline); whitespace, escapes, key order or number formatting were changed",
            Problem.NOT_CANONICAL,
        )


def parse_bundle_bytes(data: bytes) -> Any:
    """Strict parsing: UTF-8 without BOM, I-JSON (unique keys, no NaN/Infinity)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BundleInvalid(
            f"malformed bundle: not UTF-8 text (byte {exc.start})", Problem.MALFORMED
        ) from None
    try:
        return json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_no_constants)
    except json.JSONDecodeError as exc:
        raise BundleInvalid(
            f"malformed JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})",
            Problem.MALFORMED,
        ) from None
    except _NotIJson as exc:
        raise BundleInvalid(f"malformed JSON: {exc}", Problem.MALFORMED) from None
    except RecursionError:
        raise BundleInvalid("malformed JSON: nested too deeply", Problem.MALFORMED) from None
    except ValueError as exc:  # e.g. an integer literal with thousands of digits
        raise BundleInvalid(f"malformed JSON: {exc}", Problem.MALFORMED) from None


class _NotIJson(ValueError):
    pass


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _NotIJson(f"the key {json.dumps(key)} appears twice in one object")
        result[key] = value
    return result


def _no_constants(name: str) -> Any:
    raise _NotIJson(f"{name} is not a JSON number")
