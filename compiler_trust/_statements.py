"""Signed statements: what a person's own key signs when they approve or publish a version.

A statement is a small JSON object; its signature is Ed25519 over the statement's RFC 8785
canonical bytes (`statement_bytes`), written as unpadded base64url. Two kinds:

* `approval`: a reviewer approves `decision_type` version `version` whose contract hashes to
  `contract_sha256`, having been shown the impact report hashing to `report_sha256` and
  acknowledging `acknowledged_widenings` (may be empty);
* `publication`: the publisher publishes the bundle whose body (everything but `sha256` and
  `signatures`) hashes to `bundle_sha256`, for the same contract.

Both name the `signer` (a username) and the `key_id` they sign with, and the `signed_at` date
the signer gives (the compiler has no clock: the CLI reads it, these functions take it). The
signature is made where the private key lives, in the person's browser (WebCrypto) or with
`evidence-compiler sign-approval`; the workbench only checks and stores it. Pure: no clock,
randomness or file IO here.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import json
from typing import Annotated, Any, Literal

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from compiler._canonical import canonical_bytes
from compiler_trust._keys import key_id

STATEMENT_FORMAT = "evidence-workbench.statement/1"

Name = Annotated[str, Field(min_length=1)]
Sha256Hex = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
KeyId = Annotated[str, Field(pattern=r"^[0-9a-f]{16}$")]


class StatementInvalid(ValueError):
    """A statement or signature that must not be accepted; the message says why."""


def aware_datetime(value: str) -> dt.datetime:
    """An ISO 8601 date-time with a UTC offset (`ValueError` otherwise)."""
    try:
        moment = dt.datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"'{value}' is not an ISO 8601 date and time") from None
    if moment.tzinfo is None:
        raise ValueError(f"'{value}' has no UTC offset (e.g. '+00:00')")
    return moment


class _Statement(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    format: Literal["evidence-workbench.statement/1"] = "evidence-workbench.statement/1"
    decision_type: Name
    version: Name
    contract_sha256: Sha256Hex
    signer: Name
    key_id: KeyId
    signed_at: str

    @field_validator("signed_at")
    @classmethod
    def _aware(cls, value: str) -> str:
        aware_datetime(value)
        return value

    @property
    def moment(self) -> dt.datetime:
        return aware_datetime(self.signed_at)


class ApprovalStatement(_Statement):
    kind: Literal["approval"] = "approval"
    report_sha256: Sha256Hex
    acknowledged_widenings: tuple[str, ...] = ()


class PublicationStatement(_Statement):
    kind: Literal["publication"] = "publication"
    bundle_sha256: Sha256Hex


Statement = Annotated[ApprovalStatement | PublicationStatement, Field(discriminator="kind")]
_STATEMENT: TypeAdapter[ApprovalStatement | PublicationStatement] = TypeAdapter(Statement)


class SignedStatement(BaseModel):
    """A statement and the signature over its canonical bytes (`{"statement", "signature"}`,
    the file `sign-approval` writes and the form field the browser posts)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    statement: Statement
    signature: str

    @field_validator("signature")
    @classmethod
    def _base64url(cls, value: str) -> str:
        decode_signature(value)
        return value

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


# --------------------------------------------------------------------------- bytes


def statement_bytes(statement: ApprovalStatement | PublicationStatement) -> bytes:
    """Exactly what is signed: the RFC 8785 canonical JSON of the statement."""
    return canonical_bytes(statement.model_dump(mode="json"))


def encode_signature(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def decode_signature(value: str) -> bytes:
    """The 64 signature bytes of unpadded base64url text; only the canonical spelling."""
    try:
        raw = base64.urlsafe_b64decode(value.encode("ascii") + b"=" * (-len(value) % 4))
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise ValueError("the signature is not base64url") from None
    if encode_signature(raw) != value:
        raise ValueError("the signature is not canonical unpadded base64url")
    if len(raw) != 64:
        raise ValueError(f"an Ed25519 signature has 64 bytes, this one {len(raw)}")
    return raw


def parse_statement(value: Any) -> ApprovalStatement | PublicationStatement:
    try:
        return _STATEMENT.validate_python(value)
    except ValidationError as exc:
        raise StatementInvalid(_problems("the statement is invalid", exc)) from None


def parse_signed_statement(data: bytes | str | Any) -> SignedStatement:
    """A signed statement from its JSON text (or parsed JSON); `StatementInvalid` names the
    field that is wrong."""
    if isinstance(data, bytes | str):
        try:
            data = json.loads(data)
        except (ValueError, UnicodeDecodeError) as exc:
            raise StatementInvalid(f"the signed statement is not JSON ({exc})") from None
    try:
        return SignedStatement.model_validate(data)
    except ValidationError as exc:
        raise StatementInvalid(_problems("the signed statement is invalid", exc)) from None


def _problems(headline: str, exc: ValidationError) -> str:
    lines = [
        f"  {'.'.join(str(p) for p in e['loc']) or '(statement)'}: {e['msg']}" for e in exc.errors()
    ]
    return headline + ":\n" + "\n".join(lines)


# --------------------------------------------------------------------------- signing


def sign_statement(
    statement: ApprovalStatement | PublicationStatement, private_key: Ed25519PrivateKey
) -> SignedStatement:
    """Sign with the key the statement names (deterministic, Ed25519)."""
    if key_id(private_key) != statement.key_id:
        raise StatementInvalid(
            f"the statement names key {statement.key_id}, but this private key is "
            f"{key_id(private_key)}"
        )
    raw = private_key.sign(statement_bytes(statement))
    return SignedStatement(statement=statement, signature=encode_signature(raw))


# --------------------------------------------------------------------------- dates

MAX_CLOCK_SKEW = dt.timedelta(minutes=5)
"""How far past the verifier's clock a statement may be dated: the signer's clock (their
machine, for `sign-approval`) may run a little ahead of the verifier's, never by more."""

SIGNED_BEFORE_KEY = (
    "dated {signed_at}, before key {key_id} existed (it was registered {valid_from}); a key "
    "signs nothing dated before it was registered"
)
SIGNED_IN_FUTURE = (
    "dated {signed_at}, in the future: later than now ({now}) by more than the {skew} a "
    "signer's clock may be ahead"
)


def signing_date_problem(
    signed_at: str,
    *,
    key_id: str,
    valid_from: str | None = None,
    now: dt.datetime | None = None,
    skew: dt.timedelta = MAX_CLOCK_SKEW,
) -> str | None:
    """Why a statement dated `signed_at` and signed with key `key_id` cannot be believed, or
    None: dated before the key was registered (`valid_from`, an ISO 8601 date with offset;
    compared to the second, as statements are dated), or later than `now` plus `skew`. The
    compiler has no clock: the caller gives `now` (None: the future is not checked); the
    revocation is the bundle verifier's own check (`REVOKED_KEY`)."""
    moment = aware_datetime(signed_at)
    if valid_from is not None:
        registered = aware_datetime(valid_from).replace(microsecond=0)
        if moment < registered:
            return SIGNED_BEFORE_KEY.format(
                signed_at=signed_at, key_id=key_id, valid_from=valid_from
            )
    if now is not None:
        if now.tzinfo is None:
            raise ValueError("now needs a UTC offset")
        if moment > now + skew:
            shown = now.astimezone(dt.UTC).replace(microsecond=0).isoformat()
            return SIGNED_IN_FUTURE.format(signed_at=signed_at, now=shown, skew=_span(skew))
    return None


def _span(span: dt.timedelta) -> str:
    minutes, seconds = divmod(int(span.total_seconds()), 60)
    if seconds:
        return f"{int(span.total_seconds())} seconds"
    return f"{minutes} minute{'s' if minutes != 1 else ''}"


def verify_statement(signed: SignedStatement, public_key: Ed25519PublicKey) -> None:
    """The signature is the statement's, made with `public_key` (which must be the key the
    statement names); `StatementInvalid` otherwise."""
    statement = signed.statement
    if key_id(public_key) != statement.key_id:
        raise StatementInvalid(
            f"the statement names key {statement.key_id}, not {key_id(public_key)}"
        )
    try:
        public_key.verify(decode_signature(signed.signature), statement_bytes(statement))
    except InvalidSignature:
        raise StatementInvalid(
            f"bad signature: the {statement.kind} statement by '{statement.signer}' is not "
            f"signed by key {statement.key_id}"
        ) from None


def sign_as(
    statement: Any, private_key: Ed25519PrivateKey, *, signed_at: dt.datetime
) -> SignedStatement:
    """`sign-approval`: the statement (as the workbench rendered it, parsed JSON or a model)
    signed with `private_key`, naming that key and the signer's date `signed_at` (aware;
    written in UTC to the second)."""
    if signed_at.tzinfo is None:
        raise StatementInvalid("signed_at needs a UTC offset")
    model = statement if isinstance(statement, _Statement) else parse_statement(statement)
    moment = signed_at.astimezone(dt.UTC).replace(microsecond=0).isoformat()
    stamped = model.model_copy(update={"key_id": key_id(private_key), "signed_at": moment})
    return sign_statement(parse_statement(stamped.model_dump(mode="json")), private_key)
