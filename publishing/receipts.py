"""Ingesting decision receipts posted by production (`POST /api/v1/decisions`), and checking
them against their bundles before a replay counts them.

Ingest is built for thousands of receipts a second, so it reads only what routes and names
a receipt (`compiler_trust.receipt_header`: its format, decision id, bundle and type, its
fields' names, and no content anywhere), and writes it as sent, `unchecked`: the batch's
accepted receipts as one compressed document (`ReceiptBatch`) and a narrow row per receipt.
A receipt is refused at once when that much is wrong, when its decision type is outside the
token's scope or when it names a bundle this workbench did not publish for the type. A batch
costs a fixed number of queries whatever its size (the bundles it names, the decision ids
already recorded), and its accepted receipts are written in one transaction: all of them
or, if the database fails, none. A receipt whose decision id is already recorded for the
type with the same text (the sha256 of its JSON with keys sorted, computed once, as it is
stored: `receipt_text`) is a `duplicate`, accepted and not stored twice, so posting a batch
again is safe; with another text it is refused.

`receipts_check` compiles each unchecked receipt again against the bundle it names (verified
against the workbench's key set once per bundle) and compares every field the receipt states
about the decision (`compiler_trust.check_receipt`). A receipt that does not match is
`refused` with the problems found and never counts in a replay.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from compiler_trust import (
    BundleInvalid,
    Receipt,
    ReceiptInvalid,
    VerifiedBundle,
    check_receipt,
    receipt_header,
    verify_bundle,
)
from contracts.models import Bundle

from . import signing, tokens
from .models import DecisionReceipt, ReceiptBatch, ServiceToken, receipt_objects, receipt_text

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


def _problems(exc: ReceiptInvalid) -> list[dict[str, Any]]:
    return [{"loc": list(e.get("loc", ())), "msg": e["msg"]} for e in exc.errors]


def receipts_ingest(*, token: ServiceToken, receipts: Sequence[Any]) -> list[Outcome]:
    """Judge each receipt's header and store the accepted ones, all in one transaction.
    `tokens.CreatorLost` (nothing judged, nothing written) when the token's creator no longer
    owns a type of the token's that a receipt names, or none of them: the creator's role is
    asked at every call, for every batch."""
    allowed = tokens.allowed_types(token, tokens.RECORD)
    allowed_by_key = {t.key: t for t in allowed}
    named = {raw.get("decision_type") for raw in receipts if isinstance(raw, dict)
             and isinstance(raw.get("decision_type"), str)}  # fmt: skip
    lost = sorted(
        t.key for t in tokens.scoped_types(token=token)
        if t.key not in allowed_by_key and t.key in named
    )  # fmt: skip
    if lost:
        raise tokens.CreatorLost(tokens.CREATOR_LOST.format(
            prefix=token.prefix, key="', '".join(lost), what=tokens.TOKEN_NEEDS[tokens.RECORD][1]
        ))  # fmt: skip
    outcomes: list[Outcome | None] = [None] * len(receipts)
    headers = {}
    for index, raw in enumerate(receipts):
        try:
            headers[index] = receipt_header(raw)
        except ReceiptInvalid as exc:
            decision_id = raw.get("decision_id") if isinstance(raw, dict) else None
            outcomes[index] = Outcome(index, decision_id if isinstance(decision_id, str)
                                      else None, REFUSED, _problems(exc))  # fmt: skip
    bundles = {
        (bundle.decision_type.key, bundle.sha256): bundle
        for bundle in Bundle.objects.filter(
            decision_type__in=allowed, sha256__in={h.bundle_sha256 for h in headers.values()}
        ).select_related("decision_type")
    }  # fmt: skip
    taken = _recorded_ids(allowed, headers.values())
    pending: dict[tuple[int, str], DecisionReceipt] = {}
    texts: list[bytes] = []
    for index, header in headers.items():
        key, decision_id = header.decision_type, header.decision_id
        if key not in allowed_by_key:
            outcomes[index] = _refused(index, decision_id, UNKNOWN_TYPE.format(key=key),
                                       ["decision_type"])  # fmt: skip
            continue
        bundle = bundles.get((key, header.bundle_sha256))
        if bundle is None:
            outcomes[index] = _refused(index, decision_id, UNKNOWN_BUNDLE.format(
                sha256=header.bundle_sha256, key=key), ["bundle_sha256"])  # fmt: skip
            continue
        text = receipt_text(receipts[index])
        sha256 = hashlib.sha256(text).hexdigest()
        identity = (bundle.decision_type_id, decision_id)
        recorded = taken.get(identity)
        if recorded is None and identity in pending:
            recorded = pending[identity].sha256
        if recorded is not None:
            outcomes[index] = (
                Outcome(index, decision_id, DUPLICATE) if recorded == sha256
                else _refused(index, decision_id, ID_TAKEN.format(
                    decision_id=decision_id, key=key), ["decision_id"])
            )  # fmt: skip
            continue
        pending[identity] = DecisionReceipt(
            decision_type_id=bundle.decision_type_id, bundle=bundle, decision_id=decision_id,
            position=len(texts), sha256=sha256, token=token,
        )  # fmt: skip
        texts.append(text)
        outcomes[index] = Outcome(index, decision_id, ACCEPTED)
    if pending:
        with transaction.atomic():
            batch = ReceiptBatch.objects.create(document=ReceiptBatch.pack(texts))
            for row in pending.values():
                row.batch = batch
            DecisionReceipt.objects.bulk_create(pending.values(), batch_size=500)
    return [outcome for outcome in outcomes if outcome is not None]


def _recorded_ids(types: Iterable[Any], headers: Iterable[Any]) -> dict[tuple[int, str], str]:
    """(type id, decision id) -> sha256 of the receipts already recorded under the ids of a
    batch, in one query."""
    ids = {header.decision_id for header in headers}
    if not ids:
        return {}
    rows = DecisionReceipt.objects.filter(
        decision_type__in=list(types), decision_id__in=ids
    ).values_list("decision_type_id", "decision_id", "sha256")
    return {(type_id, decision_id): sha256 for type_id, decision_id, sha256 in rows}


def receipts_check(
    rows: Iterable[DecisionReceipt],
    parsed: dict[int, Receipt] | None = None,
    *,
    verified: dict[int, VerifiedBundle | str] | None = None,
) -> list[DecisionReceipt]:
    """Check each unchecked receipt of `rows` against its bundle and store the verdict:
    `matched`, or `refused` with the problems (`check_receipt`'s, or the bundle's own when it
    no longer verifies). Returns the rows, their status current; `parsed`, if given, gets
    each receipt that matched, by row id, so a replay need not parse it again. `verified`,
    if given, holds each bundle's verdict (the `VerifiedBundle`, or why it does not verify)
    by bundle id, read and filled here, so the slices of one replay verify each bundle once."""
    verified = {} if verified is None else verified
    keys = None
    checked = []
    rows = list(rows)
    documents = receipt_objects([r for r in rows if r.status == DecisionReceipt.Status.UNCHECKED])
    for row in rows:
        if row.status != DecisionReceipt.Status.UNCHECKED:
            continue
        if row.bundle_id not in verified:
            if keys is None:
                keys = (signing.trusted_public_keys(), signing.key_owners())
            bundle = Bundle.objects.get(pk=row.bundle_id)
            try:
                verified[row.bundle_id] = verify_bundle(bundle.data, keys[0], key_owners=keys[1])
            except BundleInvalid as exc:
                verified[row.bundle_id] = BUNDLE_UNVERIFIED.format(
                    sha256=bundle.sha256, reason=exc)  # fmt: skip
        against = verified[row.bundle_id]
        if isinstance(against, str):
            row.status = DecisionReceipt.Status.REFUSED
            row.problems = [{"loc": ["bundle_sha256"], "msg": against}]
        else:
            try:
                receipt = check_receipt(documents[row.pk], against)
            except ReceiptInvalid as exc:
                row.status, row.problems = DecisionReceipt.Status.REFUSED, _problems(exc)
            else:
                row.status, row.problems = DecisionReceipt.Status.MATCHED, []
                if parsed is not None:
                    parsed[row.pk] = receipt
        checked.append(row)
    # Matched ones in one statement (bulk_update's CASE over hundreds of rows costs more than
    # the check of a receipt); refused ones are few, each with its own problems.
    matched = [row.pk for row in checked if row.status == DecisionReceipt.Status.MATCHED]
    DecisionReceipt.objects.filter(pk__in=matched).update(
        status=DecisionReceipt.Status.MATCHED, problems=[]
    )
    refused = [row for row in checked if row.status == DecisionReceipt.Status.REFUSED]
    DecisionReceipt.objects.bulk_update(refused, ["status", "problems"], batch_size=500)
    return rows
