"""Computing an impact report and storing it by the hash of its inputs: the body of the
report's task (`tasks.compute_impact_report`), which claims the report and hands its slices
to workers (`chunks`). It imports neither the task nor the services that queue it
(`stored`); the task gives it the callbacks that queue a slice, or the report again.

A report is claimed by one worker at a time (`_claim`: it moves to `computing` and its
attempt counts); every write checks the attempt is still the one that wrote it, so a report
taken over after a stale heartbeat is written by its new attempt only.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable

from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from contracts.documents import ContractInvalid
from contracts.models import ContractVersion, StoredImpactReport
from workers import stopping

from .chunks import chunk_execute, chunks_plan, report_assemble, report_write, stale_reports
from .inputs import inputs_sha256

logger = logging.getLogger(__name__)

# Starts of a report by a worker (a failure or a lost worker each end one) before it fails.
MAX_ATTEMPTS = 3


def report_compute(
    *,
    version_id: int,
    hand_back: Callable[[int], object] | None = None,
    enqueue_chunk: Callable[[int], object] | None = None,
) -> StoredImpactReport | None:
    """The task's body: claim the report of the version's current inputs, unless it is
    stored already or another worker is computing it, and queue each of its slices
    (`enqueue_chunk(chunk_id)`; without it, compute them here, one after another). A worker
    stopped at once puts the report back as pending and calls `hand_back(version_id)` to
    queue it again. The stored row, or None."""
    versions = ContractVersion.objects.select_related("decision_type")
    version = versions.filter(pk=version_id).first()
    if version is None:
        return None
    try:
        inputs = inputs_sha256(version)
    except ContractInvalid as exc:
        logger.info("Version %s is not a valid contract: %s", version_id, exc)
        return None
    stored, _ = StoredImpactReport.objects.get_or_create(version=version, inputs_sha256=inputs)
    attempt = _claim(stored)
    if attempt is None:  # ready, failed for good, or another worker's
        stored.refresh_from_db()
        return stored
    try:
        chunks = chunks_plan(stored)
    except BaseException:
        if stopping.requested():
            with contextlib.suppress(Exception), transaction.atomic():
                status = StoredImpactReport.Status.PENDING
                handed = report_write(stored.pk, attempt, status=status, attempts=attempt - 1)
                if handed and hand_back is not None:
                    hand_back(version.pk)
        raise
    if not chunks and not stored.chunks.exclude(status="done").exists():
        report_assemble(stored.pk, attempt)  # no scenario, or every slice done already
    for chunk in chunks:
        if enqueue_chunk is not None:
            enqueue_chunk(chunk.pk)
        else:
            chunk_execute(chunk_id=chunk.pk)
    stored.refresh_from_db()
    return stored if StoredImpactReport.objects.filter(pk=stored.pk).exists() else None


def _claim(stored: StoredImpactReport) -> int | None:
    """Take the report for this worker: one that is queued, whose last attempt failed, or
    whose worker was lost, while it has attempts left. The attempt's number, or None."""
    status = StoredImpactReport.Status
    now = timezone.now()
    claimable = Q(status=status.PENDING) | Q(status=status.FAILED) | Q(pk__in=stale_reports())
    claimed = StoredImpactReport.objects.filter(
        claimable, pk=stored.pk, attempts__lt=MAX_ATTEMPTS
    ).update(status=status.COMPUTING, attempts=F("attempts") + 1, started_at=now, heartbeat_at=now)
    if not claimed:
        return None
    return StoredImpactReport.objects.values_list("attempts", flat=True).get(pk=stored.pk)


__all__ = ["MAX_ATTEMPTS", "inputs_sha256", "report_compute", "stale_reports"]
