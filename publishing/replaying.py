"""Replaying recorded decisions against a version: the body of the task
(`publishing.tasks.replay_recorded_decisions`) and the sentences a replayed decision is told
in. It imports neither the task nor the service that queues it (`publishing.replay`).

Replaying needs no evidence text: receipts carry none and no decision reads it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from compiler import InvalidInput
from compiler_trust import ReceiptInvalid, parse_receipt, replay
from contracts.documents import (
    ContractInvalid,
    compiled_contract,
    contract_document,
    document_sha256,
)
from contracts.models import ContractVersion
from contracts.wording import PLAIN, Words

from .impact import STATE_WORDS
from .impact.sentences import admitted_clauses
from .models import DecisionReceipt, ReceiptReplay, ReceiptReplayChunk, receipt_objects
from .receipts import receipts_check

FORMAT = "evidence-workbench.recorded-decisions/1"
REFUSED_SHOWN = 20


# The sentences of a replayed decision, said plain (stored) or in HTML (printed: the decision
# id, slots and candidate ids each in a <bdi>, `contracts.wording`).


def flip_text(decision: str, key: str, old: str, new: str, words: Words = PLAIN) -> str:
    return words.say(
        "In decision {decision}, {slot} goes from {old} to {new}.",
        decision=words.text(decision), slot=words.name(key), old=STATE_WORDS.get(old, old),
        new=STATE_WORDS.get(new, new),
    )  # fmt: skip


def admitted_text(decision: str, added: list[str], removed: list[str], words: Words = PLAIN) -> str:
    if not (added or removed):
        return ""
    return words.say(
        "In decision {decision}, the compiler {clauses}.", decision=words.text(decision),
        clauses=admitted_clauses(added, removed, words),
    )  # fmt: skip


def problem_text(decision: str, message: str, words: Words = PLAIN) -> str:
    return words.say(
        "{decision} cannot be replayed against this version: {message}",
        decision=words.name(decision), message=words.text(message),
    )  # fmt: skip


def decision_changes(receipt: Any, output: Any) -> dict[str, Any]:
    """What replaying one receipt changes: slot flips, the result, the admitted set."""
    decision = receipt.decision_id
    before = {slot.proposition: slot.state for slot in receipt.slots}
    after = {slot.proposition: str(slot.state) for slot in output.slots}
    flips = []
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key, "missing"), after.get(key, "missing")
        if old != new:
            flips.append({"proposition": key, "before": old, "after": new,
                          "text": flip_text(decision, key, old, new)})  # fmt: skip
    added = sorted(set(output.packet_ids) - set(receipt.packet))
    removed = sorted(set(receipt.packet) - set(output.packet_ids))
    result = str(output.result)
    return {
        "decision_id": decision,
        "bundle_sha256": receipt.bundle_sha256,
        "contract_version": receipt.contract_version,
        "result": {"before": receipt.result, "after": result},
        "flips": flips,
        "added": added,
        "removed": removed,
        "admitted_text": admitted_text(decision, added, removed),
        "changed": bool(flips or added or removed or result != receipt.result),
        "problems": [],
    }


def replay_rows(
    rows: Iterable[DecisionReceipt], contract: Any, *, verified: dict[int, Any] | None = None
) -> dict[str, Any]:
    """One slice of a report: `rows` checked against their bundles (`receipts_check`, with
    the bundles' verdicts `verified` so far), and those that match compiled against
    `contract`. Counts, the decisions that change, the refused receipts (a few of them with
    their reasons)."""
    replayed = 0
    changed: list[dict[str, Any]] = []
    refused: list[dict[str, Any]] = []
    parsed: dict[int, Any] = {}
    rows = receipts_check(rows, parsed, verified=verified)
    documents = receipt_objects([r for r in rows if r.status == DecisionReceipt.Status.MATCHED
                                 and r.pk not in parsed])  # fmt: skip
    for row in rows:
        if row.status == DecisionReceipt.Status.REFUSED:
            refused.append({"decision_id": row.decision_id, "problems": row.problems})
            continue
        replayed += 1
        try:
            receipt = parsed.get(row.pk) or parse_receipt(documents[row.pk])
            output = replay(receipt, contract)
        except (ReceiptInvalid, InvalidInput) as exc:
            changed.append({
                "decision_id": row.decision_id, "changed": True, "flips": [], "added": [],
                "removed": [], "admitted_text": "", "result": None,
                "problems": [problem_text(row.decision_id, e["msg"]) for e in exc.errors],
                "errors": [e["msg"] for e in exc.errors],
            })  # fmt: skip
            continue
        entry = decision_changes(receipt, output)
        if entry["changed"]:
            changed.append(entry)
    return {
        "replayed": replayed,
        "changed": changed,
        "refused": len(refused),
        "refused_examples": refused[:REFUSED_SHOWN],
    }


def merged_report(days: int, parts: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The report of a replay from its slices' parts, in the order of the slices."""
    replayed, refused = 0, 0
    changed: list[dict[str, Any]] = []
    examples: list[dict[str, Any]] = []
    for part in parts:
        replayed += part["replayed"]
        refused += part["refused"]
        changed += part["changed"]
        examples += part["refused_examples"]
    return {
        "format": FORMAT,
        "days": days,
        "replayed": replayed,
        "unchanged": replayed - len(changed),
        "changed": changed,
        "refused": refused,
        "refused_examples": examples[:REFUSED_SHOWN],
    }


def receipts_in_window(version: ContractVersion, *, days: int, now: dt.datetime) -> Any:
    return DecisionReceipt.objects.filter(
        decision_type_id=version.decision_type_id, received_at__gte=now - dt.timedelta(days=days)
    ).order_by("received_at", "id")


def replay_receipts(version: ContractVersion, *, days: int, now: dt.datetime) -> dict[str, Any]:
    """The recorded-decisions report of `version`: every receipt of its type received in the
    `days` days before `now`, replayed against its contract (`ContractInvalid` if it has none),
    here and at once."""
    contract = compiled_contract(version)
    rows = receipts_in_window(version, days=days, now=now)
    return merged_report(days, [replay_rows(rows.iterator(), contract)])


def chunk_execute(*, chunk_id: int) -> ReceiptReplayChunk:
    """Replay one slice of a replay (the task's body): claim it (only a queued one), replay
    its receipts, store its part and the replay's progress; the last slice to finish merges
    the parts into the replay's report. A contract that does not compile fails the replay."""
    with transaction.atomic():
        chunk = ReceiptReplayChunk.objects.select_for_update().get(pk=chunk_id)
        if chunk.status != ReceiptReplayChunk.Status.QUEUED:
            return chunk
        chunk.status, chunk.claimed_at = ReceiptReplayChunk.Status.RUNNING, timezone.now()
        chunk.claims += 1
        chunk.save(update_fields=["status", "claimed_at", "claims"])
        ReceiptReplay.objects.filter(
            pk=chunk.replay_id, status=ReceiptReplay.Status.QUEUED
        ).update(status=ReceiptReplay.Status.RUNNING)  # fmt: skip
    row = ReceiptReplay.objects.select_related("version").get(pk=chunk.replay_id)
    if row.status == ReceiptReplay.Status.FAILED:
        return chunk
    shared = _shared_by_slices(row)
    try:
        if "contract" not in shared:
            shared["contract"] = compiled_contract(row.version)
    except ContractInvalid as exc:
        _fail(row.pk, "; ".join(f"{p.where}: {p.msg}" for p in exc.problems))
        return chunk
    rows = DecisionReceipt.objects.filter(pk__in=chunk.receipt_ids).order_by("received_at", "id")
    part = replay_rows(rows, shared["contract"], verified=shared["verified"])
    return chunk_finish(chunk_id=chunk.pk, claim=chunk.claims, part=part)


# What every slice of one replay needs alike, kept by this process for the replay it works
# on: a worker takes slice after slice of a replay, and reading the contract and the key set
# (a dozen queries) and verifying each bundle again for every slice made a fixed cost of a
# slice that two workers then both paid. The first slice of a replay a worker takes reads
# them; a slice of another replay starts afresh. A replay is told apart by its row's id and
# creation time together: an id alone comes back (SQLite reuses the highest rowid once its row
# is deleted), and a stale key set or contract would refuse or misjudge every receipt.
_slices_of: dict[str, Any] = {"replay": None}


def _shared_by_slices(row: ReceiptReplay) -> dict[str, Any]:
    global _slices_of
    replay = (row.pk, row.created_at, row.version_id)
    if _slices_of["replay"] != replay:
        _slices_of = {"replay": replay, "verified": {}}
    return _slices_of


@transaction.atomic
def chunk_finish(*, chunk_id: int, claim: int, part: dict[str, Any]) -> ReceiptReplayChunk:
    """Store a slice's part and count it in the replay's progress, unless the slice was
    claimed again since `claim` (queued again as stale while its worker was only slow: the
    later claim's worker counts it) or is done already. The last slice merges the report."""
    # The replay's row, then the slice's: the order every writer locks them in.
    replay_row = ReceiptReplay.objects.select_for_update().get(
        pk=ReceiptReplayChunk.objects.values("replay_id").get(pk=chunk_id)["replay_id"]
    )
    chunk = ReceiptReplayChunk.objects.select_for_update().get(pk=chunk_id)
    if chunk.claims != claim or chunk.status == ReceiptReplayChunk.Status.DONE:
        return chunk
    chunk.status, chunk.result = ReceiptReplayChunk.Status.DONE, part
    chunk.save(update_fields=["status", "result"])
    replay_row.done += len(chunk.receipt_ids)
    replay_row.save(update_fields=["done"])
    if (
        replay_row.status == ReceiptReplay.Status.RUNNING
        and not replay_row.chunks.exclude(status=ReceiptReplayChunk.Status.DONE).exists()
    ):
        replay_finish(replay_row)
    return chunk


def replay_finish(row: ReceiptReplay) -> None:
    """The replay's report from its slices' parts (the row locked by the caller)."""
    parts = row.chunks.order_by("number").values_list("result", flat=True)
    row.status, row.result = ReceiptReplay.Status.DONE, merged_report(row.days, parts)
    row.contract_sha256 = contract_sha256(row.version)
    row.finished_at = timezone.now()
    row.save(update_fields=["status", "result", "contract_sha256", "finished_at"])


def _fail(replay_id: int, error: str) -> None:
    ReceiptReplay.objects.filter(pk=replay_id).exclude(status=ReceiptReplay.Status.DONE).update(
        status=ReceiptReplay.Status.FAILED, error=error[:2000], finished_at=timezone.now()
    )


def chunk_size() -> int:
    """Receipts per slice: enough that a slice's setup (the contract compiled, the bundles
    verified) is paid rarely, few enough that two workers share even a small replay and a
    stopped worker's slice is little to do again."""
    return max(1, int(getattr(settings, "RECEIPT_REPLAY_CHUNK", 500)))


def replay_plan(row: ReceiptReplay, *, now: dt.datetime) -> list[ReceiptReplayChunk]:
    """Cut the receipts the replay covers (received in its `days` before `now`) into slices,
    stored queued; a replay with no receipts is done at once, with an empty report."""
    ids = list(receipts_in_window(row.version, days=row.days, now=now).values_list("pk", flat=True))
    size = chunk_size()
    chunks = ReceiptReplayChunk.objects.bulk_create(
        ReceiptReplayChunk(replay=row, number=n, receipt_ids=ids[start : start + size])
        for n, start in enumerate(range(0, len(ids), size))
    )  # fmt: skip
    row.total = len(ids)
    row.save(update_fields=["total"])
    if not chunks:
        replay_finish(row)
    return chunks


def replay_execute(*, replay_id: int) -> ReceiptReplay:
    """Replay every queued slice of a replay here, one after another: a replay queued by a
    release that ran a replay as one task (cut into slices here if it has none)."""
    row = ReceiptReplay.objects.select_related("version").get(pk=replay_id)
    if row.status == ReceiptReplay.Status.QUEUED and not row.chunks.exists():
        replay_plan(row, now=timezone.now())
    for pk in ReceiptReplayChunk.objects.filter(
        replay_id=replay_id, status=ReceiptReplayChunk.Status.QUEUED
    ).values_list("pk", flat=True):  # fmt: skip
        chunk_execute(chunk_id=pk)
    return ReceiptReplay.objects.get(pk=replay_id)


def contract_sha256(version: ContractVersion) -> str:
    return document_sha256(contract_document(version))
