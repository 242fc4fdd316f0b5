"""The bundle document as frozen pydantic models: manifest, contract, source classes,
scenarios and signatures (docs/bundles.md describes every field), and `VerifiedBundle`.
"""

from __future__ import annotations

import base64
import binascii
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from compiler._input import Contract
from compiler_trust._bundle.reasons import FORMAT, FORMAT_2
from compiler_trust._statements import Statement, aware_datetime, decode_signature

Role = Literal["publisher", "approver"]
Name = Annotated[str, Field(min_length=1)]
Sha256Hex = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
KeyId = Annotated[str, Field(pattern=r"^[0-9a-f]{16}$")]
Signer = tuple[str, Role, Ed25519PrivateKey | bytes | str]
"""`(username, role, private key)` for `sign_bundle`; the key may be an object or PKCS#8 PEM."""
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


class SuiteDigest(_Frozen):
    """The test suite a format-3 bundle names: the sha256 of its RFC 8785 form, and how many
    scenarios it holds."""

    sha256: Sha256Hex
    count: int = Field(ge=1)


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
    tests: SuiteDigest | None = None
    """Format 3 only: the version's test suite, or None when it has no scenarios."""

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
# `compiler.slot_states`.
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

    format: Literal["evidence-workbench.bundle/2", "evidence-workbench.bundle/3"]
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
    def _members_of_its_format(self) -> BundleBody:
        if self.format == FORMAT_2 and "tests" in self.manifest.model_fields_set:
            raise ValueError(
                f"manifest.tests is a member of {FORMAT}; a {FORMAT_2} bundle carries its "
                "scenarios itself"
            )
        if self.format == FORMAT and "scenarios" in self.model_fields_set:
            raise ValueError(
                f"an {FORMAT} bundle carries no scenarios: they travel in its test suite, "
                "which manifest.tests names"
            )
        return self

    def body_json(self) -> dict[str, Any]:
        """The body as signed, every default written out, with the members of its format
        only (a format-2 body never gains `manifest.tests`, so it hashes as it always did)."""
        if self.format == FORMAT_2:
            return self.model_dump(mode="json", exclude={"manifest": {"tests"}})
        return self.model_dump(mode="json", exclude={"scenarios"})

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
        _check_expected_keys(self.scenarios, contract)
        return self


def _check_expected_keys(scenarios: tuple[Scenario, ...], contract: Contract) -> None:
    keys = {p.key for p in contract.propositions}
    for scenario in scenarios:
        for key in scenario.expected.slots:
            if key not in keys:
                raise ValueError(
                    f"scenario '{scenario.name}' expects a state for '{key}', "
                    "which is not a proposition of the contract"
                )


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
    def format(self) -> str:
        return self.bundle.format

    @property
    def scenarios(self) -> tuple[Scenario, ...]:
        """A format-2 bundle's scenarios; a format-3 bundle carries none (`tests` names its
        test suite, which `verify_suite` checks)."""
        return self.bundle.scenarios

    @property
    def tests(self) -> SuiteDigest | None:
        return self.bundle.manifest.tests

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
