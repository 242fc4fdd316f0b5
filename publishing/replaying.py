"""Replaying recorded decisions against a version: the body of the task
(`publishing.tasks.replay_recorded_decisions`) and the sentences a replayed decision is told
in. It imports neither the task nor the service that queues it (`publishing.replay`).

Replaying needs no evidence text: receipts carry none and no decision reads it.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.db import transaction
from django.utils import timezone

from compiler import InvalidInput
from compiler.receipts import ReceiptInvalid, parse_receipt, replay
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
from .models import DecisionReceipt, ReceiptReplay
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


def replay_receipts(version: ContractVersion, *, days: int, now: dt.datetime) -> dict[str, Any]:
    """The recorded-decisions report of `version`: every receipt of its type received in the
    `days` days before `now`, replayed against its contract (`ContractInvalid` if it has none)."""
    contract = compiled_contract(version)
    rows = DecisionReceipt.objects.filter(
        decision_type_id=version.decision_type_id, received_at__gte=now - dt.timedelta(days=days)
    ).order_by("received_at", "id")
    replayed = 0
    changed: list[dict[str, Any]] = []
    refused: list[dict[str, Any]] = []
    for row in receipts_check(rows):
        if row.status == DecisionReceipt.Status.REFUSED:
            refused.append({"decision_id": row.decision_id, "problems": row.problems})
            continue
        replayed += 1
        try:
            receipt = parse_receipt(row.receipt)
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
        "format": FORMAT,
        "days": days,
        "replayed": replayed,
        "unchanged": replayed - len(changed),
        "changed": changed,
        "refused": len(refused),
        # The first few, with their reasons: what the report shows of them.
        "refused_examples": refused[:REFUSED_SHOWN],
    }


def replay_execute(*, replay_id: int) -> ReceiptReplay:
    """Run a queued replay (the task's body) and store its report."""
    with transaction.atomic():
        row = ReceiptReplay.objects.select_for_update().select_related("version").get(
            pk=replay_id)  # fmt: skip
        if row.status != ReceiptReplay.Status.QUEUED:
            return row
        row.status = ReceiptReplay.Status.RUNNING
        row.save(update_fields=["status"])
    version = row.version
    try:
        result = replay_receipts(version, days=row.days, now=timezone.now())
        row.status, row.result = ReceiptReplay.Status.DONE, result
    except ContractInvalid as exc:
        row.status = ReceiptReplay.Status.FAILED
        row.error = "; ".join(f"{p.where}: {p.msg}" for p in exc.problems)[:2000]
    row.contract_sha256 = contract_sha256(version)
    row.finished_at = timezone.now()
    row.save(update_fields=["status", "result", "error", "contract_sha256", "finished_at"])
    return row


def contract_sha256(version: ContractVersion) -> str:
    return document_sha256(contract_document(version))
