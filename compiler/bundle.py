"""Signed contract bundles: the format, its hash, Ed25519 signatures, verification, and
compiling against a verified bundle. Pure: no clock, network, randomness or file IO here (key
generation and key files live in `compiler.keys`); the caller supplies `published_at`.

A bundle is one JSON object (docs/bundles.md has the full description)::

    {"format": "evidence-workbench.bundle/2",
     "manifest": {"decision_type", "version", "parent_sha256", "author",
                  "publisher": {"person", "key_id"}, "editors": [{"person", "key_id"}],
                  "approvers": [{"person", "key_id"}], "published_at", "compiler_version"},
     "contract": {...compiler.models.Contract...},
     "source_classes": [{"key", "label", "description", "authority_tier", "weak"}],
     "scenarios": [{"name", "request", "corpus": {"directory", "candidates"},
                    "expected": {"slots": {proposition: state}, "admitted", "rejected"}}],
     "sha256": "<hex sha256 of the RFC 8785 form of every other member but signatures>",
     "signatures": [{"signer", "role", "key_id", "algorithm": "ed25519", "signature"}]}

* `sha256` covers everything except `sha256` and `signatures`: `bundle_body_hash`.
* Each signature is Ed25519 over the 64 ASCII bytes of that hex digest, base64 (standard
  alphabet, padded). Signer names are not signed directly; they are bound by the hashed
  manifest instead: the one publisher signature must be by `manifest.publisher` with the key
  it names, and the approver signatures by exactly the people in `manifest.approvers`, each
  with the key named for them.
* Four eyes: no approver is the publisher or an editor (everyone who created or edited the
  version), and no approval key is the publisher's or an editor's; the trusted key set must
  let the publisher's key `publish` and each approval key `approve` (`compiler.keys`).
* The file form is the RFC 8785 canonical bytes of the whole bundle plus one newline
  (`serialize_bundle`). Signing is deterministic (Ed25519), so exporting the same version
  twice gives identical bytes, and `verify_bundle` on bytes insists on exactly that form, so
  changing any single byte of a bundle file makes verification fail.

Public API: `sign_bundle`, `serialize_bundle`, `verify_bundle` -> `VerifiedBundle`,
`inspect_bundle` (integrity without keys), `compile_input_from_bundle`, `scenario_input`,
`bundle_body_hash`, `BundleInvalid` (with a reason constant per four-eyes and key-role
refusal), and from `compiler.keys` (re-exported) `TrustedKey`, `key_id` and `load_public_keys`.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, Any, Literal

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from .canonical import canonical_bytes, sha256_hex
from .errors import InvalidInput
from .keys import (
    KeyLoadError,
    TrustedKey,
    key_id,
    load_private_key,
    load_public_key,
    load_public_keys,
)
from .loading import load_input
from .models import CompileInput, Contract
from .statements import (
    ApprovalStatement,
    PublicationStatement,
    SignedStatement,
    Statement,
    aware_datetime,
    decode_signature,
    statement_bytes,
)

__all__ = [
    "FORMAT",
    "SIGNATURE_ALGORITHM",
    "Bundle",
    "BundleBody",
    "BundleInvalid",
    "Manifest",
    "Problem",
    "Scenario",
    "Signature",
    "SourceClass",
    "TrustedKey",
    "VerifiedBundle",
    "assemble_bundle",
    "bundle_body",
    "bundle_body_hash",
    "compile_input_from_bundle",
    "inspect_bundle",
    "key_id",
    "load_public_keys",
    "normalise_body",
    "scenario_input",
    "serialize_bundle",
    "sign_bundle",
    "verify_bundle",
]

FORMAT = "evidence-workbench.bundle/2"
OUTDATED_FORMATS = ("evidence-workbench.bundle/1",)
"""Formats this compiler knows but refuses: their manifest names the approvers without their
keys and does not name the editors, so four eyes cannot be checked."""
SIGNATURE_ALGORITHM = "ed25519"
UNSIGNED_MEMBERS = ("sha256", "signatures")
"""The two top-level members the hash does not cover."""

Role = Literal["publisher", "approver"]
Name = Annotated[str, Field(min_length=1)]
Sha256Hex = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
KeyId = Annotated[str, Field(pattern=r"^[0-9a-f]{16}$")]
Signer = tuple[str, Role, Ed25519PrivateKey | bytes | str]
"""`(username, role, private key)` for `sign_bundle`; the key may be an object or PKCS#8 PEM."""
KEY_ROLE = {"publisher": "publish", "approver": "approve"}
"""The trusted key set's role a signature of each kind needs."""

# Reasons tests assert on (`str.format`ted). The four-eyes ones come from the signed manifest
# alone; the roles from the trusted key set.
OUTDATED_FORMAT = (
    "outdated bundle: it declares format {found!r}, whose manifest names its approvers "
    "without their keys and not its editors at all, so four eyes cannot be checked; this "
    "compiler reads {expected!r}: publish the version again"
)
APPROVER_IS_PUBLISHER = (
    "four eyes: approver '{person}' is also the bundle's publisher; someone other than the "
    "publisher must approve"
)
APPROVER_IS_EDITOR = (
    "four eyes: approver '{person}' created or edited this version; nobody approves their own work"
)
APPROVAL_WITH_PUBLISHER_KEY = (
    "four eyes: approver '{person}' is named with key {key_id}, the publisher '{publisher}''s "
    "key; each approval is made with the approver's own key"
)
APPROVAL_WITH_EDITOR_KEY = (
    "four eyes: approver '{person}' is named with key {key_id}, the key of editor "
    "'{editor}'; each approval is made with the approver's own key"
)
APPROVERS_SHARE_A_KEY = (
    "four eyes: approvers {people} are named with the same key {key_id}; each approves with "
    "their own key"
)
NO_PUBLISHER_SIGNATURE = "the bundle has no publisher signature"
PUBLISHER_IS_NOT_THE_SIGNER = (
    "the publisher signature is by {signer}, but the manifest names '{publisher}' as publisher"
)
APPROVER_WITHOUT_SIGNATURE = (
    "approver '{person}' is listed in the manifest without a matching approver signature"
)
SIGNED_WITH_ANOTHER_KEY = (
    "the {role} signature by '{signer}' is made with key {key_id}, but the manifest names key "
    "{named} for them"
)
STATEMENT_OTHER_CONTRACT = (
    "statement for another contract: signatures[{index}] by '{signer}' ({role}) signs "
    "contract sha256 {signed}, but this bundle's contract hashes to {actual}"
)
STATEMENT_OTHER_REPORT = (
    "statement for another report: signatures[{index}] by '{signer}' approves impact report "
    "{signed}, but the manifest names report {actual}"
)
STATEMENT_OTHER_BUNDLE = (
    "statement for another bundle: the publication statement by '{signer}' signs bundle "
    "{signed}, but this bundle's sha256 is {actual}"
)
STATEMENT_MISMATCH = "signatures[{index}] by '{signer}' ({role}): its statement {what}"
REVOKED_KEY = (
    "revoked key: signatures[{index}] by '{signer}' ({role}, key {key_id}) is dated "
    "{signed_at}, at or after the key was revoked ({revoked_at}); signatures made before "
    "the revocation stay valid"
)
UNSTATED_SIGNATURE = (
    "signatures[{index}] by '{signer}' ({role}, key {key_id}) carries no signed statement, "
    "and only a legacy (workbench-held) key may sign that way"
)
LEGACY_SIGNATURE = (
    "legacy signature: signatures[{index}] by '{signer}' ({role}, key {key_id}) was made "
    "with a key the workbench held, so it proves only that the workbench recorded it"
)
TOO_FEW_APPROVALS = (
    "policy: the bundle carries {count} approval(s); this verifier requires {required} "
    "(--require-approvals)"
)
KEY_MAY_NOT_SIGN = (
    "not allowed: signatures[{index}] by '{signer}' ({role}, key {key_id}): the trusted key "
    "set says this key may not {action} (its roles: {roles})"
)


# --------------------------------------------------------------------------- errors


class Problem(StrEnum):
    """What kind of thing is wrong with a bundle (`BundleInvalid.problem`)."""

    MALFORMED = "malformed"  # not UTF-8, not JSON, duplicate keys, not representable in JCS
    FORMAT = "format"  # not an object, or an unsupported `format`
    ALTERED = "altered"  # sha256 does not match the contents
    NOT_CANONICAL = "not_canonical"  # contents intact, bytes differ from the canonical file form
    SCHEMA = "schema"  # fields missing, of the wrong type, or inconsistent
    UNKNOWN_KEY = "unknown_key"  # a signature by a key the verifier does not trust
    BAD_SIGNATURE = "bad_signature"  # a signature that does not sign this bundle's sha256
    WRONG_SIGNER = "wrong_signer"  # a trusted key used under another person's name
    SIGNATURES = "signatures"  # the set of signatures does not match the manifest
    OUTDATED = "outdated"  # an older format, without what four eyes needs
    FOUR_EYES = "four_eyes"  # an approver is the publisher or an editor, or uses their key
    NOT_ALLOWED = "not_allowed"  # the key set does not let the key publish / approve
    STATEMENT = "statement"  # a signed statement that is not this bundle's
    REVOKED = "revoked"  # a signature dated at or after its key's revocation
    POLICY = "policy"  # fewer approvals than the verifier requires


class BundleInvalid(ValueError):
    """A bundle that must not be used. `reason` is one human-readable explanation (several
    lines for schema errors, each with its location); `problem` classifies it; `errors` lists
    `{"loc", "msg"}` for schema errors."""

    def __init__(
        self,
        reason: str,
        problem: Problem = Problem.SCHEMA,
        errors: list[dict[str, Any]] | None = None,
    ):
        self.reason = reason
        self.problem = Problem(problem)
        self.errors = errors or []
        super().__init__(reason)

    def __str__(self) -> str:
        return self.reason


# --------------------------------------------------------------------------- the document


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class _Loose(BaseModel):
    """Scenario content: known fields are checked, anything else the workbench adds is kept
    (and hashed and signed like the rest) so the workbench can evolve without a new format."""

    model_config = ConfigDict(frozen=True, extra="allow")


class Signatory(_Frozen):
    """A publisher or an approver: the person and the key they sign with."""

    person: Name
    key_id: KeyId


class Editor(_Frozen):
    """Someone who created or edited the version, with their key when they have one."""

    person: Name
    key_id: KeyId | None = None


class Manifest(_Frozen):
    decision_type: Name
    version: Name
    parent_sha256: Sha256Hex | None = None
    author: Name
    publisher: Signatory
    editors: tuple[Editor, ...] = Field(min_length=1)
    approvers: tuple[Signatory, ...] = Field(min_length=1)
    published_at: str
    compiler_version: Name
    report_sha256: Sha256Hex | None = None
    """The impact report the approvers were shown; every approval statement names it."""

    @field_validator("approvers")
    @classmethod
    def _distinct_approvers(cls, value: tuple[Signatory, ...]) -> tuple[Signatory, ...]:
        return _sorted_distinct(value, "person", "approver")

    @field_validator("editors")
    @classmethod
    def _distinct_editors(cls, value: tuple[Editor, ...]) -> tuple[Editor, ...]:
        return _sorted_distinct(value, "person", "editor")

    @property
    def approver_names(self) -> tuple[str, ...]:
        return tuple(a.person for a in self.approvers)

    @field_validator("published_at")
    @classmethod
    def _aware_iso_datetime(cls, value: str) -> str:
        aware_datetime(value)
        return value

    @model_validator(mode="after")
    def _author_edited(self) -> Manifest:
        if self.author not in {e.person for e in self.editors}:
            raise ValueError(f"the author '{self.author}' is not among the editors")
        return self


class SourceClass(_Frozen):
    key: Name
    label: str
    description: str = ""
    authority_tier: int | str
    weak: bool = False


class ScenarioCorpus(_Loose):
    directory: dict[str, Any] = {}
    candidates: tuple[dict[str, Any], ...]


# A scenario may expect its compile to be refused; every slot then reads "refused", as in
# `compiler.perturb.slot_states`.
ExpectedState = Literal["supported", "contradicted", "unknown", "refused"]


class ScenarioExpectation(_Loose):
    slots: dict[str, ExpectedState]
    admitted: tuple[str, ...] | None = None
    rejected: tuple[str, ...] | None = None


class Scenario(_Loose):
    name: Name
    request: dict[str, Any]
    corpus: ScenarioCorpus
    expected: ScenarioExpectation


class BundleBody(_Frozen):
    """Everything the sha256 covers."""

    format: Literal["evidence-workbench.bundle/2"]
    manifest: Manifest
    contract: Contract
    source_classes: tuple[SourceClass, ...]
    scenarios: tuple[Scenario, ...] = ()

    @field_validator("source_classes")
    @classmethod
    def _catalogue(cls, value: tuple[SourceClass, ...]) -> tuple[SourceClass, ...]:
        return _sorted_distinct(value, "key", "source class")

    @field_validator("scenarios")
    @classmethod
    def _scenario_names(cls, value: tuple[Scenario, ...]) -> tuple[Scenario, ...]:
        return _sorted_distinct(value, "name", "scenario")

    @model_validator(mode="after")
    def _consistent(self) -> BundleBody:
        manifest, contract = self.manifest, self.contract
        if manifest.decision_type != contract.decision_type:
            raise ValueError(
                f"manifest.decision_type '{manifest.decision_type}' is not the contract's "
                f"'{contract.decision_type}'"
            )
        if manifest.version != contract.version:
            raise ValueError(
                f"manifest.version '{manifest.version}' is not the contract's '{contract.version}'"
            )
        catalogue = {c.key for c in self.source_classes}
        for proposition in contract.propositions:
            for name in proposition.accepted_classes:
                if name not in catalogue:
                    raise ValueError(
                        f"proposition '{proposition.key}' accepts source class '{name}', "
                        "which is not in the bundle's source_classes"
                    )
        keys = {p.key for p in contract.propositions}
        for scenario in self.scenarios:
            for key in scenario.expected.slots:
                if key not in keys:
                    raise ValueError(
                        f"scenario '{scenario.name}' expects a state for '{key}', "
                        "which is not a proposition of the contract"
                    )
        return self


class Signature(_Frozen):
    """One signatory's signature. With a `statement` (approval or publication, made on the
    person's side) it signs the statement's canonical bytes, in base64url; without one it is
    a legacy signature over the bundle's sha256, in padded base64, made by the workbench
    with a key it held."""

    signer: Name
    role: Role
    key_id: KeyId
    algorithm: Literal["ed25519"]
    statement: Statement | None = None
    signature: str

    @field_validator("signature")
    @classmethod
    def _canonical_signature(cls, value: str, info: ValidationInfo) -> str:
        if info.data.get("statement") is not None:
            decode_signature(value)
        else:
            _decode_signature(value)
        return value

    @property
    def raw(self) -> bytes:
        if self.statement is not None:
            return decode_signature(self.signature)
        return _decode_signature(self.signature)


class Bundle(BundleBody):
    sha256: Sha256Hex
    signatures: tuple[Signature, ...]


@dataclass(frozen=True)
class VerifiedBundle:
    """A bundle whose hash and signatures were checked. `document` is the JSON exactly as
    verified (serialise that, not `bundle`, to reproduce the signed bytes)."""

    bundle: Bundle
    document: Mapping[str, Any]
    warnings: tuple[str, ...] = ()
    """One line per legacy signature (made with a key the workbench held)."""

    @property
    def contract(self) -> Contract:
        return self.bundle.contract

    @property
    def manifest(self) -> Manifest:
        return self.bundle.manifest

    @property
    def sha256(self) -> str:
        return self.bundle.sha256

    @property
    def scenarios(self) -> tuple[Scenario, ...]:
        return self.bundle.scenarios

    @property
    def signatures(self) -> tuple[Signature, ...]:
        return self.bundle.signatures


def _sorted_distinct(items: tuple[Any, ...], field: str, what: str) -> tuple[Any, ...]:
    names = [getattr(item, field) for item in items]
    twice = sorted(name for name, n in Counter(names).items() if n > 1)
    if twice:
        raise ValueError(f"{what} '{twice[0]}' appears more than once")
    return tuple(sorted(items, key=lambda item: getattr(item, field)))


def _decode_signature(value: str) -> bytes:
    try:
        raw = base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise ValueError("the signature is not base64") from None
    # b64decode ignores stray bits in the last character; only the canonical text is accepted,
    # so that no character of a signature can change without the bundle failing.
    if base64.b64encode(raw).decode("ascii") != value:
        raise ValueError("the signature is not canonical base64")
    if len(raw) != 64:
        raise ValueError(f"an Ed25519 signature has 64 bytes, this one {len(raw)}")
    return raw


# --------------------------------------------------------------------------- hash


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
    classes and scenarios sorted, so that the same content always hashes the same."""
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
    return model.model_dump(mode="json")


# --------------------------------------------------------------------------- signing


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
    entries.sort(key=lambda e: (e["role"] != "publisher", e["signer"], e["key_id"]))
    bundle = {**normal, "sha256": digest, "signatures": entries}
    try:
        model = Bundle.model_validate(bundle)
    except ValidationError as exc:
        raise _schema_error(exc, "the signatures are invalid") from None
    _check_four_eyes(model.manifest)
    _check_signature_set(model)
    return bundle


def _with_signer_keys(
    body: Mapping[str, Any], keys: Sequence[tuple[str, Role, Ed25519PrivateKey]]
) -> Any:
    """The body with the publisher (when missing) and the signers' key ids written into the
    manifest entries that lack one. Anything unexpected is left for validation to report."""
    if not isinstance(body, Mapping) or not isinstance(body.get("manifest"), Mapping):
        return body
    manifest = dict(body["manifest"])
    # Looked up with whatever a manifest entry gives as its person: any JSON value, not only str.
    ids: dict[tuple[object, Role], str] = {(name, role): key_id(key) for name, role, key in keys}
    publishers = [name for name, role, _ in keys if role == "publisher"]
    if "publisher" not in manifest and len(publishers) == 1:
        manifest["publisher"] = {"person": publishers[0]}

    def signed(entry: Any, role: Role) -> Any:
        if not isinstance(entry, Mapping) or "key_id" in entry:
            return entry
        found = ids.get((entry.get("person"), role))
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
    entries.sort(key=lambda e: (e["role"] != "publisher", e["signer"], e["key_id"]))
    bundle = {**normal, "sha256": digest, "signatures": entries}
    try:
        model = Bundle.model_validate(bundle)
    except ValidationError as exc:
        raise _schema_error(exc, "the signatures are invalid") from None
    _check_four_eyes(model.manifest)
    _check_signature_set(model)
    contract_sha256 = sha256_hex(normal["contract"])
    for index, sig in enumerate(model.signatures):
        _check_statement(index, sig, model, contract_sha256)
    return bundle


def serialize_bundle(bundle: Mapping[str, Any] | VerifiedBundle) -> bytes:
    """The file form: RFC 8785 canonical JSON of the whole bundle plus one `\\n`.

    Canonical rather than pretty so that there is exactly one byte sequence per bundle: export
    twice gives identical bytes, and verification can insist on it (`jq .` shows it pretty)."""
    document = bundle.document if isinstance(bundle, VerifiedBundle) else bundle
    return canonical_bytes(document) + b"\n"


# --------------------------------------------------------------------------- verification


PublicKeys = Mapping[str, TrustedKey | Ed25519PublicKey | bytes | str]


def verify_bundle(
    document: bytes | bytearray | str | Mapping[str, Any],
    public_keys: PublicKeys,
    *,
    key_owners: Mapping[str, str] | None = None,
    require_approvals: int = 1,
) -> VerifiedBundle:
    """Check a bundle and return it validated, or raise `BundleInvalid` with the reason.

    `document` is the file's bytes (or text), or an already-parsed JSON object. Bytes must
    be exactly `serialize_bundle`'s form: strict UTF-8, I-JSON (no duplicate keys, no NaN),
    RFC 8785 canonical, one trailing newline. `public_keys` maps key id -> trusted key:
    `load_public_keys(path)`'s `TrustedKey`s, which name each key's person and roles (a
    bare public key or PEM is trusted with neither, and so can sign nothing). Each
    signature's signer must be its key's person; `key_owners` (key id -> username), if
    given, says who owns which key instead.

    Checks, in order: parses; is a bundle of this format (an outdated one is refused with
    its own reason); `sha256` matches the contents (else "the bundle was altered"); the
    schema; four eyes in the signed manifest (no approver is the publisher or an editor, or
    is named with their key); every signature is by a trusted key, its owner's, and valid;
    one publisher signature by the manifest's publisher and one approver signature by each
    manifest approver, each with the key the manifest names, and no others; the key set
    lets the publisher's key publish and each approval key approve; at least
    `require_approvals` approvals (the verifier's policy); finally, for bytes,
    that they are exactly the canonical form (so a change the JSON parser would not notice
    still fails).

    A signature with a `statement` signs that statement, which must be the bundle's (its
    contract sha256, the manifest's report, the bundle's sha256 for the publication) and be
    dated before its key's `revoked_at`, if any. A signature without one (the workbench's
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


def _check_statement(index: int, sig: Signature, model: Bundle, contract_sha256: str) -> None:
    """A signature's statement is this bundle's: by the entry's signer with its key, of the
    kind its role makes, for the manifest's type and version, the bundle's contract, and the
    manifest's report (approval) or the bundle's sha256 (publication)."""
    statement, manifest = sig.statement, model.manifest
    assert statement is not None
    facts = {"index": index, "signer": sig.signer, "role": sig.role}
    kind = "publication" if sig.role == "publisher" else "approval"
    for what, ok in (
        (f"is by '{statement.signer}', not the entry's signer", statement.signer == sig.signer),
        (f"names key {statement.key_id}, not {sig.key_id}", statement.key_id == sig.key_id),
        (f"is a {statement.kind} statement, not an {kind}", statement.kind == kind),
        (
            f"is for {statement.decision_type} version {statement.version}, not "
            f"{manifest.decision_type} version {manifest.version}",
            (statement.decision_type, statement.version)
            == (manifest.decision_type, manifest.version),
        ),
    ):
        if not ok:
            raise BundleInvalid(STATEMENT_MISMATCH.format(**facts, what=what), Problem.STATEMENT)
    if statement.contract_sha256 != contract_sha256:
        raise BundleInvalid(
            STATEMENT_OTHER_CONTRACT.format(
                **facts, signed=statement.contract_sha256, actual=contract_sha256
            ),
            Problem.STATEMENT,
        )
    if isinstance(statement, ApprovalStatement) and statement.report_sha256 != (
        manifest.report_sha256
    ):
        raise BundleInvalid(
            STATEMENT_OTHER_REPORT.format(
                **facts, signed=statement.report_sha256, actual=manifest.report_sha256 or "none"
            ),
            Problem.STATEMENT,
        )
    if isinstance(statement, PublicationStatement) and statement.bundle_sha256 != model.sha256:
        raise BundleInvalid(
            STATEMENT_OTHER_BUNDLE.format(
                signer=sig.signer, signed=statement.bundle_sha256, actual=model.sha256
            ),
            Problem.STATEMENT,
        )


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
        raise BundleInvalid(OUTDATED_FORMAT.format(found=form, expected=FORMAT), Problem.OUTDATED)
    if form != FORMAT:
        shown = "no format" if form is None else f"format {json.dumps(form)}"
        raise BundleInvalid(
            f"unsupported bundle: it declares {shown}; this compiler reads '{FORMAT}'",
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
        raise _schema_error(exc, f"the bundle does not match the {FORMAT} schema") from None
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


def _check_four_eyes(manifest: Manifest) -> None:
    """No approver is the publisher or an editor, and none is named with the publisher's,
    an editor's or another approver's key: all from the signed manifest, no key needed."""
    publisher = manifest.publisher
    editors = {e.person for e in manifest.editors}
    editor_keys = {e.key_id: e.person for e in manifest.editors if e.key_id is not None}
    for approver in manifest.approvers:
        person, kid = approver.person, approver.key_id
        if person == publisher.person:
            raise BundleInvalid(APPROVER_IS_PUBLISHER.format(person=person), Problem.FOUR_EYES)
        if person in editors:
            raise BundleInvalid(APPROVER_IS_EDITOR.format(person=person), Problem.FOUR_EYES)
        if kid == publisher.key_id:
            raise BundleInvalid(
                APPROVAL_WITH_PUBLISHER_KEY.format(
                    person=person, key_id=kid, publisher=publisher.person
                ),
                Problem.FOUR_EYES,
            )
        if kid in editor_keys:
            raise BundleInvalid(
                APPROVAL_WITH_EDITOR_KEY.format(person=person, key_id=kid, editor=editor_keys[kid]),
                Problem.FOUR_EYES,
            )
    by_key: dict[str, list[str]] = defaultdict(list)
    for approver in manifest.approvers:
        by_key[approver.key_id].append(approver.person)
    for kid, people in sorted(by_key.items()):
        if len(people) > 1:
            raise BundleInvalid(
                APPROVERS_SHARE_A_KEY.format(people=_names(people), key_id=kid),
                Problem.FOUR_EYES,
            )


def _check_key_roles(model: Bundle, trusted: Mapping[str, TrustedKey]) -> None:
    for index, sig in enumerate(model.signatures):
        roles = trusted[sig.key_id].roles
        needed = KEY_ROLE[sig.role]
        if needed not in roles:
            raise BundleInvalid(
                KEY_MAY_NOT_SIGN.format(
                    index=index,
                    signer=sig.signer,
                    role=sig.role,
                    key_id=sig.key_id,
                    action=needed,
                    roles=", ".join(sorted(roles)) or "none",
                ),
                Problem.NOT_ALLOWED,
            )


def _check_signature_set(model: Bundle) -> None:
    manifest, signatures = model.manifest, model.signatures
    publishers = [s for s in signatures if s.role == "publisher"]
    if not publishers:
        raise BundleInvalid(NO_PUBLISHER_SIGNATURE, Problem.SIGNATURES)
    if len(publishers) > 1:
        names = _names(sorted(s.signer for s in publishers))
        raise BundleInvalid(
            f"the bundle has {len(publishers)} publisher signatures ({names}); "
            "exactly one is required",
            Problem.SIGNATURES,
        )
    if publishers[0].signer != manifest.publisher.person:
        raise BundleInvalid(
            PUBLISHER_IS_NOT_THE_SIGNER.format(
                signer=_names([publishers[0].signer]), publisher=manifest.publisher.person
            ),
            Problem.SIGNATURES,
        )
    approvals = Counter(s.signer for s in signatures if s.role == "approver")
    for name, count in sorted(approvals.items()):
        if count > 1:
            raise BundleInvalid(f"'{name}' signed as approver {count} times", Problem.SIGNATURES)
        if name not in manifest.approver_names:
            raise BundleInvalid(
                f"an approver signature by '{name}', who is not among the manifest's "
                f"approvers ({_names(manifest.approver_names)})",
                Problem.SIGNATURES,
            )
    for name in manifest.approver_names:
        if name not in approvals:
            raise BundleInvalid(APPROVER_WITHOUT_SIGNATURE.format(person=name), Problem.SIGNATURES)
    named = {("publisher", manifest.publisher.person): manifest.publisher.key_id} | {
        ("approver", a.person): a.key_id for a in manifest.approvers
    }
    for sig in signatures:
        if sig.key_id != named[sig.role, sig.signer]:
            raise BundleInvalid(
                SIGNED_WITH_ANOTHER_KEY.format(
                    role=sig.role,
                    signer=sig.signer,
                    key_id=sig.key_id,
                    named=named[sig.role, sig.signer],
                ),
                Problem.SIGNATURES,
            )
    # With those keys and four eyes (approval keys distinct, none the publisher's), no key
    # signs for two people.


def _trusted_key(kid: str, key: TrustedKey | Ed25519PublicKey | bytes | str) -> TrustedKey:
    if isinstance(key, TrustedKey):
        return key
    if isinstance(key, Ed25519PublicKey):
        return TrustedKey(key)
    if isinstance(key, bytes | str):
        return TrustedKey(load_public_key(key))
    raise TypeError(f"public key {kid}: expected a TrustedKey, not {type(key).__name__}")


# --------------------------------------------------------------------------- compiling


def compile_input_from_bundle(bundle: VerifiedBundle | Bundle, document: Any) -> CompileInput:
    """The compile input for `document` against the bundle's contract.

    `document` is a compile input without a contract: `request`, `candidates` and optionally
    `directory`. It may carry a `contract` only if that contract is the bundle's one (equal
    after validation, i.e. the same contract sha256 in the output); any other contract is
    refused rather than silently replaced, because the caller evidently meant to compile
    against something else. Raises `InvalidInput` (exit 2) listing every problem, the
    contract mismatch included, with locations."""
    contract = bundle.contract
    if not isinstance(document, Mapping):
        raise InvalidInput(
            [{"loc": [], "msg": f"the input is {_json_type(document)}, not an object"}]
        )
    doc = dict(document)
    problems: list[dict[str, Any]] = []
    if "contract" in doc:
        given = doc.pop("contract")
        if not _same_contract(given, contract):
            problems.append(
                {
                    "loc": ["contract"],
                    "msg": (
                        "the input carries a contract that is not the bundle's "
                        f"('{contract.decision_type}' version '{contract.version}', "
                        f"sha256 {sha256_hex(contract.model_dump(mode='json'))}); "
                        "leave `contract` out to compile against the bundle"
                    ),
                }
            )
    doc["contract"] = contract.model_dump(mode="json")
    try:
        compiled = load_input(doc)
    except InvalidInput as exc:
        problems.extend(exc.errors)
    if problems:
        raise InvalidInput(problems)
    return compiled


def scenario_input(bundle: VerifiedBundle | Bundle, scenario: Scenario | str) -> CompileInput:
    """One of the bundle's scenarios as a compile input against the bundle's contract, so a
    service can re-run the published expectations with its own compiler."""
    if isinstance(scenario, str):
        found = next((s for s in bundle.scenarios if s.name == scenario), None)
        if found is None:
            raise KeyError(f"the bundle has no scenario '{scenario}'")
        scenario = found
    document = {
        "request": scenario.request,
        "directory": scenario.corpus.directory,
        "candidates": list(scenario.corpus.candidates),
    }
    return compile_input_from_bundle(bundle, document)


def _same_contract(given: Any, contract: Contract) -> bool:
    try:
        return Contract.model_validate(given) == contract
    except ValidationError:
        return False


# --------------------------------------------------------------------------- helpers


def _schema_error(exc: ValidationError, headline: str) -> BundleInvalid:
    errors = [{"loc": list(e["loc"]), "msg": e["msg"]} for e in exc.errors()]
    lines = [f"  {_location(e['loc'])}: {e['msg']}" for e in errors]
    return BundleInvalid(headline + ":\n" + "\n".join(lines), Problem.SCHEMA, errors)


def _location(loc: Iterable[Any]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(bundle)"


def _names(names: Iterable[str]) -> str:
    return ", ".join(f"'{n}'" for n in names) or "none"


def _json_type(value: Any) -> str:
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "null" if value is None else type(value).__name__
