"""The impact report, computed in the background and kept by the hash of its inputs.

At 10,000 scenarios a report is about a minute of compiles, too long for a request. So the
report is computed by a task (`tasks.compute_impact_report`, which runs
`computing.report_compute`) when a version is submitted and
again whenever what it is computed from changes (a scenario, a candidate, a corpus, a source
class, another version published: `signals.py`), and stored as a `StoredImpactReport` under
`inputs_sha256`, the hash of those inputs. A page or the approve action hashes the inputs
(a few queries, no compile) and reads the report stored under that hash; when there is none
yet it asks for one and says it is being computed. The stored document and its sha256 are
exactly `impact_report(version)`'s, so approvals record the same hash as before.

A report is `pending` (queued), then `computing` while a worker has it, then `ready` or
`failed`. The computing worker beats on the row as a suite run's does (`heartbeat_at`); a
report computing with a stale heartbeat lost its worker (killed, out of memory) and is queued
again, or after `MAX_ATTEMPTS` starts failed with `REPORT_STOPPED`; the review pages look for
that as they are viewed, and every worker as it starts and while it lives
(`reports_recover_stale`, registered with `workers.registry`). A failed attempt is tried again when
the report is next asked for, up to `MAX_ATTEMPTS` in all. `report_state` says which of these
a report is in, for the pages.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from contracts import permissions
from contracts.models import AuditAction, ContractVersion, ImpactReportHead, StoredImpactReport
from contracts.services import audit_record

from .computing import MAX_ATTEMPTS, inputs_sha256, report_compute, stale_reports
from .entries import report_entries
from .inputs import inputs_fingerprint, reading_page, remembered
from .report import ImpactReport, impact_report
from .shown import page_head
from .tasks import compute_impact_report

logger = logging.getLogger(__name__)

# Shown, and refused with, while the report of a version's current inputs is not stored yet.
REPORT_PENDING = (
    "The impact report of version {number} is being computed; it appears here when it is "
    "ready, and the version can be approved then."
)
REPORT_FAILED = "The impact report of version {number} could not be computed: {error}"
# What a report not ready yet is doing (report_state), and why a lost one was failed.
REPORT_WAITING = "It is waiting for a worker (asked for at {time})."
REPORT_COMPUTING = (
    "A worker has been computing it since {time} (attempt {attempt} of {most}; last heard "
    "from at {heartbeat})."
)
REPORT_PROGRESS = "{done} of {total} scenarios compiled."
REPORT_REQUEUED = "Its worker stopped, so it was queued again at {time}."
REPORT_RETRYING = "The last attempt failed ({error}); it is being tried again."
REPORT_STOPPED = (
    "The worker computing it stopped (no heartbeat since {heartbeat}) on attempt {attempts} "
    "of {most}; it was not queued again. It is computed again when a scenario, a corpus, "
    "the catalogue or the contract changes, or when someone asks for it again."
)
NOT_FAILED = (
    "The impact report of version {number} has not failed, so there is nothing to compute "
    "again: {state}"
)
RETRIED = "Impact report of version {number} asked for again (it had failed: {error})"


def stored_report(version: ContractVersion) -> StoredImpactReport:
    """The stored report of the version's current inputs, asking for it (a task) when there
    is none yet, and again when its worker was lost or an attempt failed (`report_request`):
    its `status` says whether it is ready. No compile happens here, and a ready report is
    only read (its head is not loaded until asked for). A page (`hashed_once`) looks for a
    ready report by the inputs' aggregates first (`inputs_fingerprint`); an action always
    hashes the inputs themselves."""
    if reading_page():
        fingerprint = inputs_fingerprint(version)
        found = remembered(
            ("fingerprint", fingerprint), lambda: _by_fingerprint(version, fingerprint)
        )
        if found is not None:
            return found
    inputs = inputs_sha256(version)
    stored = remembered(("stored", version.pk, inputs), lambda: _stored(version, inputs))
    if reading_page() and stored.status == StoredImpactReport.Status.READY:
        # The next page view finds it by the aggregates, without reading the suite.
        StoredImpactReport.objects.filter(pk=stored.pk).update(inputs_fingerprint=fingerprint)
    return stored


def _by_fingerprint(version: ContractVersion, fingerprint: str) -> StoredImpactReport | None:
    reports = StoredImpactReport.objects.defer("shown").filter(
        version=version, inputs_fingerprint=fingerprint, status=StoredImpactReport.Status.READY
    )
    return reports.order_by("-pk").first()


def _stored(version: ContractVersion, inputs: str) -> StoredImpactReport:
    reports = StoredImpactReport.objects.defer("shown")
    stored = reports.filter(version=version, inputs_sha256=inputs).first()
    if stored is None or stored.status != StoredImpactReport.Status.READY:
        stored = report_request(version=version, inputs=inputs)
    return stored


def ready_report(
    version: ContractVersion, stored: StoredImpactReport | None = None
) -> ImpactReport | None:
    """The report as a reviewer sees it, if it is computed; None while it is being computed.
    Its head is read now, its scenarios only if asked for (`ImpactReport.scenarios`).
    `ContractInvalid` as `impact_report` raises it."""
    found = stored or stored_report(version)
    if found.status != StoredImpactReport.Status.READY:
        return None
    return remembered(("ready", found.pk), lambda: _ready(found))


def _ready(stored: StoredImpactReport) -> ImpactReport | None:
    heads = ImpactReportHead.objects.filter(report_id=stored.pk).values_list("head", flat=True)
    shown = StoredImpactReport.objects.values_list("shown", flat=True).get(pk=stored.pk)
    if shown is None:  # stored before pages read a bounded head: bound it now
        head = heads.first()
        if head is None:
            return None
        shown = page_head(head)
    return ImpactReport(
        shown,
        stored.report_sha256,
        lambda: report_entries(stored),
        head=lambda: dict(heads.first() or {}),
        stored_id=stored.pk,
    )


def report_ensure(version: ContractVersion) -> ImpactReport:
    """The report, computed here and now if it is not stored yet: for commands and the demo,
    which have no page to come back to. `ContractInvalid` as `impact_report` raises it."""
    report = ready_report(version)
    if report is None:
        report_compute(version_id=version.pk)
        report = ready_report(version)
    if report is None:  # it failed: say why, as computing it in place would have
        return impact_report(version)
    return report


def report_request(*, version: ContractVersion, inputs: str | None = None) -> StoredImpactReport:
    """Ask for the report of the version's inputs now: a pending row and the task, once (a
    second request for the same inputs finds the row). A report whose attempt failed is
    queued again (once per failure, up to `MAX_ATTEMPTS` in all), one whose worker was lost
    is recovered (`report_requeue_if_stale`). With the immediate backend (tests) the report
    is ready when this returns."""
    inputs = inputs or inputs_sha256(version)
    try:
        with transaction.atomic():
            stored, created = StoredImpactReport.objects.get_or_create(
                version=version, inputs_sha256=inputs
            )
    except IntegrityError:  # requested by someone else meanwhile
        stored = StoredImpactReport.objects.get(version=version, inputs_sha256=inputs)
        created = False
    reports = StoredImpactReport.objects.filter(pk=stored.pk)
    if created:
        compute_impact_report.enqueue(version.pk)
    elif stored.status == StoredImpactReport.Status.FAILED and stored.attempts < MAX_ATTEMPTS:
        with transaction.atomic():  # one request of several queues the retry
            if reports.filter(status=StoredImpactReport.Status.FAILED).update(
                status=StoredImpactReport.Status.PENDING
            ):
                compute_impact_report.enqueue(version.pk)
    elif stored.status == StoredImpactReport.Status.COMPUTING:
        report_requeue_if_stale(report_id=stored.pk)
    stored.refresh_from_db()
    return stored


def report_retry(*, actor: Any, version: ContractVersion) -> StoredImpactReport:
    """Ask again for a report that failed for good (its attempts used up, or its worker lost
    on the last one): its attempts start again from none, the task is queued, and the audit
    log records who asked and what the failure was. `ValidationError` if the report of the
    version's current inputs has not failed; `PermissionDenied` unless `actor` owns or
    reviews the version's decision type (who waits on the report; a viewer only reads it)."""
    decision_type = version.decision_type
    if not (permissions.can_edit(actor, decision_type) or permissions.can_review(
            actor, decision_type)):  # fmt: skip
        raise PermissionDenied(permissions.NOT_ALLOWED)
    inputs = inputs_sha256(version)
    with transaction.atomic():
        reports = StoredImpactReport.objects.select_for_update()
        stored = reports.filter(version=version, inputs_sha256=inputs).first()
        if stored is None or stored.status != StoredImpactReport.Status.FAILED:
            if stored is not None and stored.status == StoredImpactReport.Status.READY:
                state = "it is ready."
            else:
                state = (stored and report_state(stored)) or "it is being computed."
            raise ValidationError(NOT_FAILED.format(number=version.number, state=state))
        error = stored.error
        stored.status, stored.attempts, stored.error = StoredImpactReport.Status.PENDING, 0, ""
        stored.requeued_at = timezone.now()
        stored.save(update_fields=["status", "attempts", "error", "requeued_at"])
        audit_record(
            actor=actor,
            action=AuditAction.IMPACT_REPORT_RETRIED,
            summary=RETRIED.format(number=version.number, error=error),
            decision_type=version.decision_type,
            version=version,
            changes={"error": error},
        )
        compute_impact_report.enqueue(version.pk)
    stored.refresh_from_db()
    return stored


def reports_requeue_stale() -> list[StoredImpactReport]:
    """Recover every report whose workers stopped (`report_requeue_if_stale`: its slices
    not done are queued again); each worker does this as it starts. The reports queued
    again or failed."""
    stale = stale_reports().values_list("pk", flat=True)
    recovered = (report_requeue_if_stale(report_id=pk) for pk in stale)
    return [report for report in recovered if report is not None]


def reports_recover_stale() -> list[str]:
    """The workers' stale-work checker: `reports_requeue_stale`, a sentence per report."""
    return [
        f"Impact report of version {stored.version_id}: {stored.status}. {report_state(stored)}"
        for stored in reports_requeue_stale()
    ]


def report_requeue_if_stale(*, report_id: int) -> StoredImpactReport | None:
    """If the report is computing but its heartbeat is older than
    `IMPACT_REPORT_STALE_SECONDS` (its worker was killed, say), queue it again; once it has
    been started `MAX_ATTEMPTS` times, fail it with `REPORT_STOPPED` instead. The report if it
    was stale, else None."""
    with transaction.atomic():
        stored = stale_reports().select_for_update().filter(pk=report_id).first()
        if stored is None:
            return None
        now = timezone.now()
        if stored.attempts >= MAX_ATTEMPTS:
            stored.status, stored.computed_at = StoredImpactReport.Status.FAILED, now
            stored.error = REPORT_STOPPED.format(
                heartbeat=_clock(stored.heartbeat_at), attempts=stored.attempts, most=MAX_ATTEMPTS
            )
        else:
            stored.status, stored.requeued_at = StoredImpactReport.Status.PENDING, now
        stored.save(update_fields=["status", "computed_at", "error", "requeued_at"])
        if stored.status == StoredImpactReport.Status.PENDING:
            compute_impact_report.enqueue(stored.version_id)
    logger.warning("Impact report %s lost its worker: %s", stored.pk, stored.status)
    stored.refresh_from_db()
    return stored


def _clock(moment: dt.datetime | None) -> str:
    return timezone.localtime(moment).strftime("%H:%M:%S") if moment else "its start"


def report_state(stored: StoredImpactReport) -> str:
    """What a report that is not ready is doing, in a sentence or two for the pages: waiting
    for a worker, being computed (since when, which attempt, last heard from), queued again
    after its worker stopped or after a failed attempt; or why it failed."""
    status = StoredImpactReport.Status
    if stored.status == status.FAILED:
        return stored.error
    if stored.status == status.COMPUTING:
        computing = REPORT_COMPUTING.format(
            time=_clock(stored.started_at),
            attempt=stored.attempts,
            most=MAX_ATTEMPTS,
            heartbeat=_clock(stored.heartbeat_at),
        )
        if not stored.scenarios_total:
            return computing
        done = REPORT_PROGRESS.format(done=stored.scenarios_done, total=stored.scenarios_total)
        return f"{computing} {done}"
    if stored.status != status.PENDING:
        return ""
    lines = [REPORT_WAITING.format(time=_clock(stored.requested_at))]
    if stored.error:
        lines.append(REPORT_RETRYING.format(error=stored.error))
    elif stored.requeued_at:
        lines.append(REPORT_REQUEUED.format(time=_clock(stored.requeued_at)))
    return " ".join(lines)


def report_refresh(*, version_ids: list[int]) -> None:
    """Queue a recomputation for these versions (their inputs changed); the task hashes the
    inputs, so a change that leaves them as they were costs no compile."""
    for pk in version_ids:
        compute_impact_report.enqueue(pk)
