"""Computing an impact report and storing it by the hash of its inputs: the body of the
task (`tasks.compute_impact_report`). It imports neither the task nor the services that
queue it (`stored`); a worker asked to stop hands the report back through the callback the
task gives it.

A report is claimed by one worker at a time (`_claim`: it moves to `computing` and its
attempt counts), which beats on the row while it compiles; every write checks the attempt
is still this worker's, so a worker taken over after a stale heartbeat writes nothing more.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import logging
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q, QuerySet
from django.utils import timezone

from compiler import COMPILER_VERSION
from contracts.documents import ContractInvalid, compiled_contract
from contracts.models import ContractVersion, StoredImpactReport
from scenarios.models import Corpus, CorpusCandidate, Scenario
from scenarios.services import SCENARIO_FIELDS, catalogue_tiers, weak_classes
from workers import heartbeat, stopping

from .report import FORMAT, baseline_version, impact_report

logger = logging.getLogger(__name__)

# Starts of a report by a worker (a failure or a lost worker each end one) before it fails.
MAX_ATTEMPTS = 3


def inputs_sha256(version: ContractVersion) -> str:
    """The hash of everything `impact_report(version)` reads: both contracts (as compiled),
    the baseline's number, the scenarios and their expectations, the corpora, the weak
    classes and the catalogue's authority tiers, the owners' justifications of its violations
    and the compiler version.
    `ContractInvalid` if the version is not a contract.

    An internal key, never shown or signed, so plain sorted JSON is hashed (canonical RFC
    8785 hashing of 10,000 scenarios would cost more than the queries)."""
    draft = compiled_contract(version).model_dump(mode="json")
    baseline = baseline_version(version)
    published = compiled_contract(baseline).model_dump(mode="json") if baseline else None
    scenarios = Scenario.objects.live().filter(decision_type_id=version.decision_type_id)
    scenario_rows = scenarios.order_by("position", "name", "id").values_list(
        "id", "corpus_id", *SCENARIO_FIELDS
    )
    corpus_ids = scenarios.values("corpus_id")
    candidates = (
        CorpusCandidate.objects.live()
        .filter(corpus_id__in=corpus_ids)
        .order_by("corpus_id", "position", "id")
        .values_list("corpus_id", "data")
    )
    directories = Corpus.objects.filter(pk__in=corpus_ids).order_by("pk")
    justifications = version.justifications.order_by(
        "operator", "proposition", "cause"
    ).values_list("operator", "proposition", "cause", "proposition_sha256", "text", "author_id")
    digest = hashlib.sha256()
    for part in (
        [FORMAT, COMPILER_VERSION, version.pk, version.number, version.sha256, draft],
        [baseline.number if baseline else None, published],
        weak_classes(),
        catalogue_tiers(),
        list(directories.values_list("pk", "directory")),
        list(justifications),
    ):
        digest.update(_json(part))
    for rows in (scenario_rows, candidates):
        for row in rows.iterator(chunk_size=2000):
            digest.update(_json(row))
        digest.update(b"|")
    return digest.hexdigest()


def _json(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, default=str, separators=(",", ":")).encode()


def report_compute(
    *, version_id: int, hand_back: Callable[[int], object] | None = None
) -> StoredImpactReport | None:
    """The task's body: compute and store the report of the version's current inputs,
    unless it is stored already or another worker is computing it; beating on its row
    meanwhile. If the inputs change while it compiles, the report is not stored (the change
    queued its own computation). A worker stopped at once (`workers.stopping`) puts the
    report back as pending and calls `hand_back(version_id)` to queue it again. The stored
    row, or None."""
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
    beating = heartbeat.every(
        settings.IMPACT_REPORT_HEARTBEAT_SECONDS,
        lambda: _write(stored.pk, attempt, heartbeat_at=timezone.now()),
        name="impact-report-heartbeat",
    )
    try:
        report = impact_report(version)
    except Exception as exc:  # recorded, shown on the page; the next request retries
        _write(
            stored.pk,
            attempt,
            status=StoredImpactReport.Status.FAILED,
            error=f"{type(exc).__name__}: {exc}",
            computed_at=timezone.now(),
        )
    except BaseException:
        if stopping.requested():  # the worker stops at once: back to the queue, not lost
            with contextlib.suppress(Exception), transaction.atomic():
                status = StoredImpactReport.Status.PENDING
                handed = _write(stored.pk, attempt, status=status, attempts=attempt - 1)
                if handed and hand_back is not None:
                    hand_back(version.pk)
        raise
    else:
        if inputs_sha256(version) != inputs:
            # Changed while compiling: the report describes nothing stored now, and the row
            # goes (were the inputs to come back, a request would find none and ask again).
            _mine(stored.pk, attempt).delete()
            return None
        else:
            _write(
                stored.pk,
                attempt,
                status=StoredImpactReport.Status.READY,
                error="",
                document=report.document,
                report_sha256=report.sha256,
                computed_at=timezone.now(),
            )
    finally:
        beating.set()
    stored.refresh_from_db()
    return stored


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


def _write(report_id: int, attempt: int, **fields: Any) -> int:
    """Write to the report only while this worker's attempt holds it (still computing, not
    taken over after a stale heartbeat); the rows written (0 or 1)."""
    return _mine(report_id, attempt).update(**fields)


def _mine(report_id: int, attempt: int) -> QuerySet[StoredImpactReport]:
    return StoredImpactReport.objects.filter(
        pk=report_id, status=StoredImpactReport.Status.COMPUTING, attempts=attempt
    )


def stale_reports() -> QuerySet[StoredImpactReport]:
    """Reports computing whose heartbeat is older than `IMPACT_REPORT_STALE_SECONDS`."""
    cutoff = timezone.now() - dt.timedelta(seconds=settings.IMPACT_REPORT_STALE_SECONDS)
    return StoredImpactReport.objects.filter(
        Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True),
        status=StoredImpactReport.Status.COMPUTING,
    )
