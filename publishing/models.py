"""What production sends and is sent: service tokens, the API calls made with them, the
decision receipts they post, and the replays of those receipts against a draft.

The review and bundle models still live in `contracts`; these are the first rows of
`publishing` itself and point one way, at `contracts` (decision types, versions, bundles).
"""

from __future__ import annotations

import zlib
from typing import Any

import orjson
from django.conf import settings
from django.db import models
from django.db.models import Q

from contracts.models import Bundle, ContractVersion, DecisionType


class ServiceTokenQuerySet(models.QuerySet["ServiceToken"]):
    def usable(self) -> ServiceTokenQuerySet:
        """Tokens that authorise calls: not revoked, and their owner still active."""
        return self.filter(revoked_at__isnull=True, owner__is_active=True)


class ServiceToken(models.Model):
    """A bearer token a production service presents to `/api/v1/`, scoped to decision types.

    Only the sha256 of the secret is stored; the secret is shown once, when the token is
    created (`publishing.tokens.token_create`). `prefix` (the token's first characters, not
    enough to use it) names it in lists and in the call log."""

    name = models.CharField(max_length=120)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="service_tokens"
    )
    decision_types = models.ManyToManyField(DecisionType, related_name="service_tokens")
    prefix = models.CharField(max_length=16, unique=True)
    secret_sha256 = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    last_used_at = models.DateTimeField(null=True, blank=True)

    objects = ServiceTokenQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(revoked_at__isnull=True) | Q(revoked_by__isnull=False),
                name="service_token_revoked_by_someone",
            )
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_revoked(self) -> bool:
        return self.revoked_at is not None


class ApiCall(models.Model):
    """One call to `/api/v1/`: which token, which endpoint and type, what it answered.

    Append-only and one insert per call (the token lifecycle is in the audit log, the calls
    are here, so a pull every five minutes does not bury the decision type's history)."""

    token = models.ForeignKey(
        ServiceToken, on_delete=models.PROTECT, null=True, blank=True, related_name="calls"
    )
    endpoint = models.CharField(max_length=200)
    decision_type_key = models.CharField(max_length=120, blank=True)
    status = models.PositiveSmallIntegerField()
    at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-at", "-id"]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.endpoint} {self.status}"


class ReceiptBatch(models.Model):
    """The accepted receipts of one posted batch, as sent: a JSON array of their objects
    (keys sorted), zlib-compressed. Stored once per batch, the receipts of one service share
    most of their text and compress to a few percent, so that ingest writes one short value
    and a narrow row per receipt (`DecisionReceipt`, which names its place in the array)."""

    document = models.BinaryField()
    received_at = models.DateTimeField(auto_now_add=True)

    @staticmethod
    def pack(texts: list[bytes]) -> bytes:
        """`document` of the receipts' JSON texts (`receipt_text`), in order."""
        return zlib.compress(b"[" + b",".join(texts) + b"]", 1)

    def unpacked(self) -> list[Any]:
        """The receipts' objects, in order."""
        return list(orjson.loads(zlib.decompress(bytes(self.document))))


def receipt_text(receipt: Any) -> bytes:
    """A receipt's JSON text as stored and hashed (`DecisionReceipt.sha256`): keys sorted."""
    return orjson.dumps(receipt, option=orjson.OPT_SORT_KEYS)


class DecisionReceipt(models.Model):
    """A receipt a production service posted (`compiler_trust._receipts`, no evidence content), as
    it was sent (either format): the `position`-th of its `batch`'s document, with `sha256`
    the hash of its text there (`receipt_text`).

    Ingest stores it unchecked; before any replay counts it, it is compiled again against
    the bundle it names and every field compared (`publishing.receipts.receipts_check`):
    `matched`, or `refused` with the problems found, and a refused receipt never counts."""

    class Status(models.TextChoices):
        UNCHECKED = "unchecked", "Not checked yet"
        MATCHED = "matched", "Matches its bundle"
        REFUSED = "refused", "Refused"

    decision_type = models.ForeignKey(
        DecisionType, on_delete=models.PROTECT, related_name="receipts"
    )
    bundle = models.ForeignKey(Bundle, on_delete=models.PROTECT, related_name="receipts")
    decision_id = models.CharField(max_length=200)
    batch = models.ForeignKey(ReceiptBatch, on_delete=models.PROTECT, related_name="receipts")
    position = models.PositiveIntegerField()
    sha256 = models.CharField(max_length=64, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.UNCHECKED)
    problems = models.JSONField(default=list, blank=True)
    token = models.ForeignKey(
        ServiceToken, on_delete=models.PROTECT, null=True, blank=True, related_name="receipts"
    )
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-received_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["decision_type", "decision_id"], name="decision_receipt_id_unique"
            )
        ]
        indexes = [models.Index(fields=["decision_type", "-received_at"])]

    def __str__(self) -> str:
        return f"{self.decision_id} ({self.decision_type.key})"

    @property
    def receipt(self) -> Any:
        """The receipt's JSON object, as it was sent (its batch read for it: for many rows,
        `receipt_objects` reads each batch once)."""
        return self.batch.unpacked()[self.position]


def receipt_objects(rows: list[DecisionReceipt]) -> dict[int, Any]:
    """Each row's receipt object by the row's id, each batch read once."""
    batches = {
        batch.pk: batch.unpacked()
        for batch in ReceiptBatch.objects.filter(pk__in={row.batch_id for row in rows})
    }
    return {row.pk: batches[row.batch_id][row.position] for row in rows}


class ReceiptReplay(models.Model):
    """One replay of the recorded decisions of the last `days` days against a version's
    contract (`publishing.replay`), run in the background; `result` is its report."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    version = models.ForeignKey(
        ContractVersion, on_delete=models.PROTECT, related_name="receipt_replays"
    )
    days = models.PositiveIntegerField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    # The contract replayed against, so the page can say when the draft moved on since.
    contract_sha256 = models.CharField(max_length=64, blank=True)
    result = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Progress, shown on the report while it runs: receipts to replay, and replayed so far.
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"replay {self.pk} of {self.version} ({self.status})"

    @property
    def changed(self) -> list[dict[str, Any]]:
        return list(self.result.get("changed", []))


class ReceiptReplayChunk(models.Model):
    """A slice of a replay's receipts, one task each, so that every worker takes a share
    (`publishing.replaying.chunk_execute`). `result` is the slice's part of the report."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"

    replay = models.ForeignKey(ReceiptReplay, on_delete=models.CASCADE, related_name="chunks")
    number = models.PositiveIntegerField()
    receipt_ids = models.JSONField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    result = models.JSONField(default=dict, blank=True)
    # Written when a worker claims the chunk: one running past the stale threshold lost its
    # worker and is queued again (`publishing.replay.chunks_recover_stale`).
    claimed_at = models.DateTimeField(null=True, blank=True)
    # How many times a worker claimed it: only the latest claim's worker stores its part.
    claims = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["replay", "number"]
        constraints = [
            models.UniqueConstraint(fields=["replay", "number"], name="replay_chunk_number_unique")
        ]
