"""The statements a person signs on their side, and checking what they signed.

The workbench renders the canonical statement (`compiler_trust._statements`) a reviewer or publisher
is asked to sign; their browser (`static/workbench/signing.js`) or `evidence-compiler
sign-approval` signs it with a key the workbench never sees; here the signed statement is
checked against the version as it is now and against the person's registered public key
before anything is stored. No private key is read or used on this side."""

from __future__ import annotations

import base64
import datetime as dt
from collections.abc import Sequence
from typing import Any

from django.core.exceptions import ValidationError
from django.utils import timezone

from compiler_trust import (
    ApprovalStatement,
    PublicationStatement,
    SignedStatement,
    StatementInvalid,
    load_public_key,
    parse_signed_statement,
    signing_date_problem,
    statement_bytes,
    verify_statement,
)
from contracts.models import ContractVersion, SigningKey
from contracts.services import Actor
from publishing import signing

from .messages import NO_SIGNING_KEY, NOT_SIGNED, STATEMENT_REFUSED, STATEMENT_STALE


def _moment(moment: dt.datetime | None = None) -> str:
    return (moment or timezone.now()).astimezone(dt.UTC).replace(microsecond=0).isoformat()


def personal_key(person: Actor) -> SigningKey:
    """The key `person` signs new statements with (`ValidationError` if they have none)."""
    key = signing.signing_key(person)
    if key is None:
        raise ValidationError(NO_SIGNING_KEY.format(username=person.get_username()))
    return key


def approval_statement(
    person: Actor,
    version: ContractVersion,
    report_sha256: str,
    acknowledged_widenings: Sequence[str] = (),
) -> ApprovalStatement:
    """What `person` signs to approve `version` as shown with the report `report_sha256`."""
    return ApprovalStatement(
        decision_type=version.decision_type.key,
        version=str(version.number),
        contract_sha256=version.sha256,
        report_sha256=report_sha256,
        acknowledged_widenings=tuple(acknowledged_widenings),
        signer=person.get_username(),
        key_id=personal_key(person).key_id,
        signed_at=_moment(),
    )


def publication_statement(
    person: Actor, version: ContractVersion, bundle_sha256: str
) -> PublicationStatement:
    """What `person` signs to publish the bundle whose body hashes to `bundle_sha256`."""
    return PublicationStatement(
        decision_type=version.decision_type.key,
        version=str(version.number),
        contract_sha256=version.sha256,
        bundle_sha256=bundle_sha256,
        signer=person.get_username(),
        key_id=personal_key(person).key_id,
        signed_at=_moment(),
    )


def statement_base64(statement: ApprovalStatement | PublicationStatement) -> str:
    """The exact bytes to sign, for the page (the browser signs these, unchanged)."""
    return base64.b64encode(statement_bytes(statement)).decode("ascii")


def checked_statement(
    person: Actor,
    version: ContractVersion,
    signed: SignedStatement | str | dict[str, Any] | None,
    expected: dict[str, Any],
) -> SignedStatement:
    """`signed` parsed and checked: by `person`, with their registered personal key (not
    legacy, not revoked, and in force when it says it was signed), for this version with the
    fields of `expected` (e.g. `kind`, `report_sha256`), and a valid signature. Refusals are
    `ValidationError`s on the `signed_statement` field."""
    if signed in (None, ""):
        raise ValidationError({"signed_statement": NOT_SIGNED})
    try:
        if not isinstance(signed, SignedStatement):
            signed = parse_signed_statement(signed)
    except StatementInvalid as exc:
        raise ValidationError({"signed_statement": STATEMENT_REFUSED.format(reason=exc)}) from None
    statement = signed.statement
    key = personal_key(person)
    wanted = {
        "signer": person.get_username(),
        "key_id": key.key_id,
        "decision_type": version.decision_type.key,
        "version": str(version.number),
        "contract_sha256": version.sha256,
        **expected,
    }
    for field, value in wanted.items():
        found = getattr(statement, field, None)
        if found != value:
            what = f"its {field} is {found!r}, expected {value!r}"
            raise ValidationError(
                {"signed_statement": STATEMENT_STALE.format(number=version.number, what=what)}
            )
    try:
        verify_statement(signed, load_public_key(key.public_key_pem))
    except StatementInvalid as exc:
        raise ValidationError({"signed_statement": STATEMENT_REFUSED.format(reason=exc)}) from None
    problem = signing_date_problem(
        statement.signed_at, key_id=key.key_id, valid_from=_moment(key.created_at),
        now=timezone.now(),
    )  # fmt: skip
    if problem is not None:
        reason = f"the {statement.kind} statement by '{statement.signer}' is {problem}"
        raise ValidationError({"signed_statement": STATEMENT_REFUSED.format(reason=reason)})
    return signed


def stored_statement(statement: dict[str, Any] | None, signature: str) -> SignedStatement | None:
    """An approval's stored statement as a `SignedStatement` (None when it has none)."""
    if not statement or not signature:
        return None
    return parse_signed_statement({"statement": statement, "signature": signature})
