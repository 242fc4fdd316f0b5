"""Ingesting decision receipts posted by production (`POST /api/v1/decisions`).

Each receipt is judged on its own: it must be well formed and carry no evidence content
(`compiler_trust.parse_receipt`), be for a decision type the token may write to, name a
bundle stored here, and match that bundle (`compiler_trust.check_receipt`: compiling its
request and candidates against the bundle's contract gives its plan id, result and slots).
The stored bundle is verified against the workbench's key set first, once per batch.

The accepted receipts of a batch are written in one transaction: either all of them are
stored or, if the database fails, none. A refused receipt is never written. A receipt whose
decision id is already recorded for the type with the same content is a `duplicate`
(accepted, not stored twice: posting a batch again is safe); with other content, refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from compiler_trust import (
    BundleInvalid,
    ReceiptInvalid,
    VerifiedBundle,
    check_receipt,
    parse_receipt,
    verify_bundle,
)
from contracts.models import Bundle

from . import signing, tokens
from .models import DecisionReceipt, ServiceToken

ACCEPTED, DUPLICATE, REFUSED = "accepted", "duplicate", "refused"

# Messages tests assert on.
UNKNOWN_TYPE = "no decision type '{key}' is visible to this token"
UNKNOWN_BUNDLE = "bundle {sha256} of '{key}' was not published by this workbench"
BUNDLE_UNVERIFIED = "the stored bundle {sha256} does not verify now: {reason}"
ID_TAKEN = "decision id '{decision_id}' is already recorded for '{key}' with other content"


@dataclass
class Outcome:
    index: int
    decision_id: str | None
    status: str
    errors: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index, "decision_id": self.decision_id, "status": self.status,
            "errors": self.errors,
        }  # fmt: skip


def _refused(index: int, decision_id: str | None, msg: str, loc: Sequence[Any] = ()) -> Outcome:
    return Outcome(index, decision_id, REFUSED, [{"loc": list(loc), "msg": msg}])


def _loc(error: dict[str, Any]) -> list[Any]:
    return list(error.get("loc", ()))


def receipts_ingest(*, token: ServiceToken, receipts: Sequence[Any]) -> list[Outcome]:
    """Judge each receipt and store the accepted ones, all in one transaction.
    `tokens.CreatorLost` (nothing judged, nothing written) when the token's creator no longer
    owns a type of the token's that a receipt names, or none of them."""
    allowed = tokens.allowed_types(token, tokens.RECORD)
    type_ids = frozenset(t.pk for t in allowed)
    named = {raw.get("decision_type") for raw in receipts if isinstance(raw, dict)
             and isinstance(raw.get("decision_type"), str)}  # fmt: skip
    lost = sorted(
        t.key for t in tokens.scoped_types(token=token) if t.pk not in type_ids and t.key in named
    )
    if lost:
        raise tokens.CreatorLost(tokens.CREATOR_LOST.format(
            prefix=token.prefix, key="', '".join(lost), what=tokens.TOKEN_NEEDS[tokens.RECORD][1]
        ))  # fmt: skip
    verified: dict[int, VerifiedBundle | str] = {}
    outcomes: list[Outcome] = []
    pending: list[DecisionReceipt] = []
    seen: dict[tuple[int, str], dict[str, Any]] = {}
    keys = None
    for index, raw in enumerate(receipts):
        decision_id = raw.get("decision_id") if isinstance(raw, dict) else None
        decision_id = decision_id if isinstance(decision_id, str) else None
        try:
            receipt = parse_receipt(raw)
        except ReceiptInvalid as exc:
            outcomes.append(Outcome(index, decision_id, REFUSED, [
                {"loc": _loc(e), "msg": e["msg"]} for e in exc.errors]))  # fmt: skip
            continue
        key = receipt.decision_type
        bundle = (
            Bundle.objects.filter(
                sha256=receipt.bundle_sha256, decision_type__key=key,
                decision_type_id__in=type_ids,
            ).select_related("decision_type").first()
        )  # fmt: skip
        if bundle is None:
            in_scope = token.decision_types.filter(key=key).exists()
            message = UNKNOWN_BUNDLE.format(sha256=receipt.bundle_sha256, key=key)
            if not in_scope:
                message = UNKNOWN_TYPE.format(key=key)
            outcomes.append(_refused(index, decision_id, message, ["decision_type" if not
                                     in_scope else "bundle_sha256"]))  # fmt: skip
            continue
        if bundle.pk not in verified:
            if keys is None:
                keys = (signing.trusted_public_keys(), signing.key_owners())
            try:
                verified[bundle.pk] = verify_bundle(bundle.data, keys[0], key_owners=keys[1])
            except BundleInvalid as exc:
                verified[bundle.pk] = BUNDLE_UNVERIFIED.format(sha256=bundle.sha256, reason=exc)
        checked_against = verified[bundle.pk]
        if isinstance(checked_against, str):
            outcomes.append(_refused(index, decision_id, checked_against, ["bundle_sha256"]))
            continue
        try:
            check_receipt(receipt, checked_against)
        except ReceiptInvalid as exc:
            outcomes.append(Outcome(index, decision_id, REFUSED, [
                {"loc": _loc(e), "msg": e["msg"]} for e in exc.errors]))  # fmt: skip
            continue
        document = receipt.to_json()
        identity = (bundle.decision_type_id, receipt.decision_id)
        stored = seen.get(identity)
        if stored is None:
            row = DecisionReceipt.objects.filter(
                decision_type_id=bundle.decision_type_id, decision_id=receipt.decision_id
            ).values_list("receipt", flat=True).first()  # fmt: skip
            stored = row
        if stored is not None:
            if stored == document:
                outcomes.append(Outcome(index, receipt.decision_id, DUPLICATE))
            else:
                outcomes.append(_refused(index, receipt.decision_id, ID_TAKEN.format(
                    decision_id=receipt.decision_id, key=key), ["decision_id"]))  # fmt: skip
            continue
        seen[identity] = document
        pending.append(
            DecisionReceipt(
                decision_type_id=bundle.decision_type_id, bundle=bundle,
                decision_id=receipt.decision_id, receipt=document, token=token,
            )
        )  # fmt: skip
        outcomes.append(Outcome(index, receipt.decision_id, ACCEPTED))
    with transaction.atomic():
        DecisionReceipt.objects.bulk_create(pending)
    return outcomes
