"""A report computed in slices of its scenarios, one task each, as a suite run is: every
worker takes a share, so two workers take about half the time of one.

`computing.report_compute` claims the report and cuts its scenarios into slices
(`chunks_plan`); each slice's task (`chunk_execute`) claims its slice (a row lock, skipping
one another worker holds), compiles its scenarios while beating on the slice and on the
report, and stores their entries with the slice's end (`chunk_finish`), unless the slice was
claimed again meanwhile. The worker that finishes the last slice assembles the report
(`report_assemble`): the head from every entry, and the sha256 of the whole document,
computed once, here. A slice's entries are written with its end in one transaction, so a
worker killed mid-slice leaves nothing half-written; the report is then recovered as a whole
(`stored.report_requeue_if_stale`), which queues only its unfinished slices again.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, F, OuterRef, Q, QuerySet
from django.utils import timezone

from contracts.models import ImpactReportChunk, ImpactReportHead, StoredImpactReport
from workers import heartbeat, stopping

from .entries import entries_store, report_entries
from .inputs import inputs_sha256
from .report import ImpactReport, report_head, report_inputs, report_scenarios, scenario_entries

logger = logging.getLogger(__name__)

Chunk = ImpactReportChunk


def chunk_size() -> int:
    """Scenarios per slice: enough that a slice's setup (both contracts compiled, its
    corpora read) is paid rarely, few enough that two workers share a small suite and a
    lost slice is little to do again."""
    return max(1, int(getattr(settings, "IMPACT_REPORT_CHUNK", 250)))


def chunks_plan(report: StoredImpactReport) -> list[ImpactReportChunk]:
    """The report's slices to compute now: cut from its scenarios the first time, and on a
    later attempt every slice not done yet (queued again; the done ones keep their entries)."""
    with transaction.atomic():
        if report.chunks.exists():
            report.chunks.exclude(status=Chunk.Status.DONE).update(status=Chunk.Status.QUEUED)
        else:
            ids = list(report_scenarios(report.version).values_list("pk", flat=True))
            size = chunk_size()
            Chunk.objects.bulk_create(
                Chunk(report=report, number=n, first=start, scenario_ids=ids[start : start + size])
                for n, start in enumerate(range(0, len(ids), size))
            )  # fmt: skip
            StoredImpactReport.objects.filter(pk=report.pk).update(
                scenarios_total=len(ids), scenarios_done=0
            )
        return list(report.chunks.filter(status=Chunk.Status.QUEUED).order_by("number"))


def chunk_execute(
    *, chunk_id: int, hand_back: Callable[[int], object] | None = None
) -> StoredImpactReport | None:
    """A slice's task: claim it (only a queued one), compile its scenarios and store their
    entries; the worker of the last slice assembles the report. A failure fails the report
    (the next request asks again); a worker stopped at once puts the slice back in the
    queue (`hand_back(chunk_id)`). The report, or None if it is gone."""
    with transaction.atomic():
        chunk = (
            Chunk.objects.select_for_update(skip_locked=True)
            .filter(pk=chunk_id, status=Chunk.Status.QUEUED)
            .first()
        )
        if chunk is None:  # done, gone, or another worker's
            return StoredImpactReport.objects.filter(chunks__pk=chunk_id).first()
        now = timezone.now()
        chunk.status, chunk.claims, chunk.claimed_at, chunk.heartbeat_at = (
            Chunk.Status.RUNNING, chunk.claims + 1, now, now,
        )  # fmt: skip
        chunk.save(update_fields=["status", "claims", "claimed_at", "heartbeat_at"])
    report = StoredImpactReport.objects.select_related("version__decision_type").get(
        pk=chunk.report_id
    )
    if report.status != StoredImpactReport.Status.COMPUTING:
        return report
    beating = heartbeat.every(
        settings.IMPACT_REPORT_HEARTBEAT_SECONDS,
        lambda: _beat(chunk),
        name="impact-report-heartbeat",
    )
    try:
        inputs = report_inputs(report.version)
        scenarios = report_scenarios(report.version).filter(pk__in=chunk.scenario_ids)
        entries = scenario_entries(inputs, list(scenarios.select_related("decision_type")))
    except Exception as exc:  # recorded, shown on the page; the next request retries
        report_write(
            report.pk,
            report.attempts,
            status=StoredImpactReport.Status.FAILED,
            error=f"{type(exc).__name__}: {exc}",
            computed_at=timezone.now(),
        )
        return report
    except BaseException:
        if stopping.requested():  # the worker stops at once: back to the queue, not lost
            with contextlib.suppress(Exception), transaction.atomic():
                handed = Chunk.objects.filter(
                    pk=chunk.pk, claims=chunk.claims, status=Chunk.Status.RUNNING
                ).update(status=Chunk.Status.QUEUED)
                if handed and hand_back is not None:
                    hand_back(chunk.pk)
        raise
    finally:
        beating.set()
    if chunk_finish(chunk=chunk, entries=entries):
        report_assemble(report.pk, report.attempts)
    report.refresh_from_db()
    return report


def _beat(chunk: ImpactReportChunk) -> None:
    now = timezone.now()
    Chunk.objects.filter(pk=chunk.pk, claims=chunk.claims).update(heartbeat_at=now)
    StoredImpactReport.objects.filter(
        pk=chunk.report_id, status=StoredImpactReport.Status.COMPUTING
    ).update(heartbeat_at=now)


@transaction.atomic
def chunk_finish(*, chunk: ImpactReportChunk, entries: list[dict[str, Any]]) -> bool:
    """Store a slice's entries and count them in the report's progress, unless the slice
    was claimed again since (queued again while its worker was only slow: the later claim's
    worker stores it) or is done. Whether it was the last slice of the report to finish."""
    # The report's row, then the slice's: the order every writer locks them in.
    report = StoredImpactReport.objects.select_for_update().get(pk=chunk.report_id)
    locked = Chunk.objects.select_for_update().get(pk=chunk.pk)
    if locked.claims != chunk.claims or locked.status != Chunk.Status.RUNNING:
        return False
    if report.status != StoredImpactReport.Status.COMPUTING:
        return False
    entries_store(report.pk, locked.first, entries)
    locked.status = Chunk.Status.DONE
    locked.save(update_fields=["status"])
    StoredImpactReport.objects.filter(pk=report.pk).update(
        scenarios_done=F("scenarios_done") + len(entries), heartbeat_at=timezone.now()
    )
    return not report.chunks.exclude(status=Chunk.Status.DONE).exists()


def report_assemble(report_id: int, attempt: int) -> None:
    """The report from every slice's entries: its head and the sha256 of the whole document
    (computed once, here), stored while the attempt is still this one's. If the inputs
    changed while it was computed, the report is not stored: it describes nothing stored now,
    and the row goes (were the inputs to come back, a request would find none and ask again)."""
    report = StoredImpactReport.objects.select_related("version__decision_type").get(pk=report_id)
    beating = heartbeat.every(
        settings.IMPACT_REPORT_HEARTBEAT_SECONDS,
        lambda: report_write(report_id, attempt, heartbeat_at=timezone.now()),
        name="impact-report-heartbeat",
    )
    try:
        if inputs_sha256(report.version) != report.inputs_sha256:
            report_mine(report_id, attempt).delete()
            return
        entries = report_entries(report)
        whole = ImpactReport.whole(report_head(report_inputs(report.version), entries), entries)
    except Exception as exc:
        report_write(
            report_id,
            attempt,
            status=StoredImpactReport.Status.FAILED,
            error=f"{type(exc).__name__}: {exc}",
            computed_at=timezone.now(),
        )
        return
    finally:
        beating.set()
    with transaction.atomic():
        ready = report_write(
            report_id,
            attempt,
            status=StoredImpactReport.Status.READY,
            error="",
            shown=whole.shown,
            report_sha256=whole.sha256,
            computed_at=timezone.now(),
        )
        if ready:
            ImpactReportHead.objects.update_or_create(
                report_id=report_id, defaults={"head": whole.head}
            )


def report_write(report_id: int, attempt: int, **fields: Any) -> int:
    """Write to the report only while this attempt holds it (still computing, not taken
    over after a stale heartbeat); the rows written (0 or 1)."""
    return report_mine(report_id, attempt).update(**fields)


def report_mine(report_id: int, attempt: int) -> QuerySet[StoredImpactReport]:
    return StoredImpactReport.objects.filter(
        pk=report_id, status=StoredImpactReport.Status.COMPUTING, attempts=attempt
    )


def stale_reports() -> QuerySet[StoredImpactReport]:
    """Reports computing whose heartbeat (beaten by whichever worker computes a slice of
    them) is older than `IMPACT_REPORT_STALE_SECONDS`, with no slice waiting in the queue:
    nobody is on them any more."""
    cutoff = timezone.now() - dt.timedelta(seconds=settings.IMPACT_REPORT_STALE_SECONDS)
    queued = Chunk.objects.filter(report=OuterRef("pk"), status=Chunk.Status.QUEUED)
    return StoredImpactReport.objects.filter(
        Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True),
        ~Exists(queued),
        status=StoredImpactReport.Status.COMPUTING,
    )
