"""Recorded decisions: production's receipts replayed against a draft.

The impact report's fixture scenarios say what a version would change on stories someone
wrote; the receipts say what it would change on the decisions production actually made.
`replay_start` queues a replay of every receipt received in the last
`settings.RECEIPT_REPLAY_DAYS` days (default 30) of the version's decision type, cut into
slices of `RECEIPT_REPLAY_CHUNK` receipts with a task each (`publishing.tasks.replay_chunk`,
running `publishing.replaying`), so that every worker takes a share as suite runs do. Each
receipt is first checked against the bundle it names (a refused one never counts), then
compiled with `compiler_trust.replay` against the version's contract, keeping, per
decision whose slots, result or admitted set (the packet's ids) would change, what changes,
in the same terms as the report's scenarios: a slot going from one state to another,
candidates that would enter or leave the packet.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Func, IntegerField
from django.db.models.fields.json import KeyTransform
from django.db.models.functions import Coalesce
from django.utils import timezone

from contracts import permissions
from contracts.models import ContractVersion
from contracts.services import NOT_ALLOWED, Actor
from contracts.wording import said_again

from .models import DecisionReceipt, ReceiptReplay, ReceiptReplayChunk
from .replaying import admitted_text, contract_sha256, flip_text, problem_text, replay_plan
from .tasks import replay_chunk

DEFAULT_DAYS = 30


def replay_days() -> int:
    return int(getattr(settings, "RECEIPT_REPLAY_DAYS", DEFAULT_DAYS))


# --------------------------------------------------------------------------- actions


def may_replay(user: Actor, version: ContractVersion) -> bool:
    """Who acts on the impact report may ask for a replay: the type's owners and reviewers
    (the retry's rule). A viewer reads the report and its last replay, but a replay is work
    queued in their name and a row written, so it is a change a viewer may not make."""
    return permissions.can_edit(user, version.decision_type) or permissions.can_review(
        user, version.decision_type
    )


@transaction.atomic
def replay_start(
    *, actor: Actor | None, version: ContractVersion, days: int | None = None
) -> ReceiptReplay:
    """Queue a replay of the recorded decisions against `version` (`actor` None: a command).
    The task is enqueued in the same transaction as the row, as suite runs are."""
    if actor is not None and not may_replay(actor, version):
        raise PermissionDenied(NOT_ALLOWED)
    row = ReceiptReplay.objects.create(
        version=version,
        days=replay_days() if days is None else days,
        requested_by=actor if actor is not None and actor.is_authenticated else None,
    )
    for chunk in replay_plan(row, now=timezone.now()):
        replay_chunk.enqueue(chunk.pk)
    row.refresh_from_db()
    return row


def stale_seconds() -> float:
    return float(getattr(settings, "RECEIPT_REPLAY_STALE_SECONDS", 120))


def chunks_recover_stale() -> list[str]:
    """Slices still running long after a worker claimed them lost that worker (killed, out
    of memory): each is queued again, with a task, once (the row is locked and checked still
    stale). Only the latest claim's worker stores the part (`replaying.chunk_finish`), so a
    worker that was only slow does not count it twice."""
    cutoff = timezone.now() - dt.timedelta(seconds=stale_seconds())
    recovered = []
    stale = ReceiptReplayChunk.objects.filter(
        status=ReceiptReplayChunk.Status.RUNNING, claimed_at__lt=cutoff
    ).values_list("pk", flat=True)  # fmt: skip
    for pk in list(stale):
        with transaction.atomic():
            chunk = ReceiptReplayChunk.objects.select_for_update().get(pk=pk)
            if (
                chunk.status != ReceiptReplayChunk.Status.RUNNING
                or chunk.claimed_at is None
                or (chunk.claimed_at >= cutoff)
            ):
                continue
            chunk.status = ReceiptReplayChunk.Status.QUEUED
            chunk.save(update_fields=["status"])
            replay_chunk.enqueue(chunk.pk)
        recovered.append(
            f"Slice {chunk.number} of receipt replay {chunk.replay_id} lost its worker: "
            "queued again."
        )
    return recovered


# --------------------------------------------------------------------------- reads


class _JSONArrayLength(Func):
    """How many items a JSON array holds, counted by the database."""

    function = "json_array_length"
    output_field = IntegerField()

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return super().as_sql(compiler, connection, function="jsonb_array_length", **extra)


_CHANGED = KeyTransform("changed", "result")


class ChangedDecisions:
    """A replay's changed decisions as a sequence the paging helper slices: its length and
    each slice are read by the database from the stored report, which is never decoded
    whole (a replay of many receipts stores thousands of them)."""

    def __init__(self, replay_pk: int, count: int) -> None:
        self.replay_pk, self._count = replay_pk, count

    def count(self) -> int:
        return self._count

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, window: slice) -> list[dict[str, Any]]:
        indexes = range(*window.indices(self._count))
        if not indexes:
            return []
        picked = {f"changed_{i}": KeyTransform(str(i), _CHANGED) for i in indexes}
        row = ReceiptReplay.objects.filter(pk=self.replay_pk).annotate(**picked)
        return [_shown(entry) for entry in row.values_list(*picked).get() if entry is not None]


def recorded_decisions(version: ContractVersion) -> dict[str, Any]:
    """What the impact page's "Recorded decisions" section shows: the latest replay of this
    version (its figures read from its report by the database, not its report), whether the
    contract moved on since, how many receipts there are, and its changed decisions as a
    `ChangedDecisions` to page through."""
    latest = (
        ReceiptReplay.objects.filter(version=version)
        .defer("result")
        .annotate(
            replayed=KeyTransform("replayed", "result"),
            unchanged=KeyTransform("unchanged", "result"),
            refused=KeyTransform("refused", "result"),
            refused_examples=KeyTransform("refused_examples", "result"),
            changed_count=Coalesce(_JSONArrayLength(_CHANGED), 0),
        )
        .first()
    )
    stale = latest is not None and latest.status == ReceiptReplay.Status.DONE and (
        latest.contract_sha256 != contract_sha256(version))  # fmt: skip
    return {
        "replay": latest,
        "changed": ChangedDecisions(latest.pk, latest.changed_count) if latest else [],
        "stale": stale,
        "days": replay_days(),
        # A receipt found not to match its bundle is not a recorded decision.
        "receipts": DecisionReceipt.objects.filter(decision_type_id=version.decision_type_id)
        .exclude(status=DecisionReceipt.Status.REFUSED)
        .count(),
    }


def _shown(entry: dict[str, Any]) -> dict[str, Any]:
    """A changed decision as the page prints it: each sentence said again in HTML from the
    facts stored beside it when its plain form is the stored text, else the stored text
    escaped and isolated whole (a replay stored by an older release)."""
    decision = str(entry.get("decision_id", ""))

    errors = entry.get("errors") or []
    problems = entry.get("problems") or []
    return {
        **entry,
        "flips": [
            {**f, "html": said_again(f.get("text"), lambda w, f=f: flip_text(
                decision, f["proposition"], f["before"], f["after"], w))}
            for f in entry.get("flips", [])
        ],
        "admitted_html": said_again(entry.get("admitted_text", ""), lambda w: admitted_text(
            decision, entry["added"], entry["removed"], w)) if entry.get("admitted_text") else "",
        "problems_html": [
            said_again(problem, lambda w, i=i: problem_text(decision, errors[i], w))
            for i, problem in enumerate(problems)
        ],
    }  # fmt: skip


__all__ = [
    "chunks_recover_stale",
    "may_replay",
    "recorded_decisions",
    "replay_start",
]
