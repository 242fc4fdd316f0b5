"""Runs: start one (queued for the worker through `scenarios.tasks`, or compiled here and
now), and requeue a run whose worker stopped. The compiling itself is `scenarios.runner`'s."""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Exists, OuterRef, QuerySet
from django.utils import timezone

from contracts.models import ContractVersion, SourceClass
from contracts.services import Actor, audit_record
from scenarios import tasks
from scenarios.audit import Action
from scenarios.models import Scenario, SuiteRun, SuiteRunChunk
from scenarios.runner import chunk_scenarios, run_execute

from .base import NOT_ALLOWED, can_run

WRONG_VERSION = "That version belongs to another decision type."
NO_SCENARIOS = "There are no scenarios to run."
CONTRACT_INVALID = "Version {number} is not a valid contract: {problems}"
RUN_STOPPED = (
    "The worker running this run stopped (no heartbeat since {heartbeat}) after it had been "
    "requeued {requeues} times; it was not requeued again. Start a new run."
)
# A run whose worker stops is requeued this many times, then failed with RUN_STOPPED.
MAX_REQUEUES = 2


def weak_classes() -> list[str]:
    """The catalogue's weak source classes: what `substitute_class` perturbations use first."""
    return list(SourceClass.objects.filter(weak=True).order_by("key").values_list("key", flat=True))


def catalogue_tiers() -> dict[str, int]:
    """Every class of the catalogue with its authority tier (1, a system of record, is the
    most authoritative): what the contract probes judge precedence and promotion by."""
    return dict(SourceClass.objects.order_by("key").values_list("key", "authority_tier"))


def run_start(
    *,
    actor: Actor,
    version: ContractVersion,
    scenario: Scenario | None = None,
    background: bool = True,
) -> SuiteRun:
    """Start a run of the suite (or one scenario) against `version`.

    In the background (the default) the run is queued for the worker: the task is enqueued in
    the same transaction as the run, so the worker sees both together (with the immediate
    backend, in tests, the run has finished when this returns). `background=False` compiles
    here and now, as `manage.py run_scenarios` does.
    """
    run = _run_create(actor=actor, version=version, scenario=scenario, enqueue=background)
    if not background:
        run = run_execute(run_id=run.pk)
    return run


@transaction.atomic
def _run_create(
    *, actor: Actor, version: ContractVersion, scenario: Scenario | None, enqueue: bool
) -> SuiteRun:
    decision_type = version.decision_type
    if not can_run(actor, decision_type):
        raise PermissionDenied(NOT_ALLOWED)
    if scenario is not None and scenario.decision_type_id != decision_type.pk:
        raise ValidationError({"version": WRONG_VERSION})
    total = 1 if scenario is not None else decision_type.scenarios.live().count()
    if total == 0:
        raise ValidationError(NO_SCENARIOS)
    run = SuiteRun.objects.create(
        decision_type=decision_type,
        version=version,
        scenario=scenario,
        total=total,
        created_by=actor,
        weak_classes=weak_classes(),
        catalogue=catalogue_tiers(),
    )
    audit_record(
        actor=actor,
        action=Action.RUN_STARTED,
        summary=f"Started a run of {scenario.name if scenario else f'{total} scenarios'} "
        f"against version {version.number}",
        version=version,
        changes={"run": run.pk, "scenarios": total},
    )
    # Chunks are for workers to share a run; one compiled here and now is one chunk.
    size = chunk_scenarios() if enqueue else total
    SuiteRunChunk.objects.bulk_create(
        SuiteRunChunk(run=run, number=number, first=first, count=min(size, total - first))
        for number, first in enumerate(range(0, total, size))
    )
    if enqueue:
        _enqueue(run)
    run.refresh_from_db()
    return run


def runs_requeue_stale() -> list[SuiteRun]:
    """Requeue every running run whose worker stopped beating (see `run_requeue_if_stale`);
    every worker does this as it starts and every STALE_WORK_CHECK_SECONDS while it lives,
    `manage.py requeue_stale_runs` on demand. The runs
    requeued or failed."""
    stale = _stale_runs().values_list("pk", flat=True)
    recovered = (run_requeue_if_stale(run_id=pk) for pk in stale)
    return [run for run in recovered if run is not None]


def run_requeue_if_stale(*, run_id: int) -> SuiteRun | None:
    """If the run is running, a chunk of it is running and its heartbeat is older than
    `SUITE_RUN_STALE_SECONDS` (its worker was killed, say), queue it again for a worker to
    resume after the scenarios it stored; after `MAX_REQUEUES` requeues, fail it with
    `RUN_STOPPED` instead. The run if it was stale, else None. `runs_requeue_stale` calls
    this for each stale run (pages never do: a GET writes nothing)."""
    with transaction.atomic():
        run = (
            _stale_runs()
            .select_for_update(of=("self",))
            .filter(pk=run_id)
            .select_related("version")
            .first()
        )
        if run is None:
            return None
        if run.requeues >= MAX_REQUEUES:
            run.status, run.finished_at = SuiteRun.Status.FAILED, timezone.now()
            run.error = RUN_STOPPED.format(
                heartbeat=timezone.localtime(run.heartbeat_at).strftime("%H:%M:%S"),
                requeues=run.requeues,
            )
            run.save(update_fields=["status", "finished_at", "error"])
            action, summary = Action.RUN_FAILED, f"Run {run.pk} failed: {run.error}"
        else:
            run.status, run.requeues = SuiteRun.Status.QUEUED, run.requeues + 1
            run.requeued_at, run.resumed_from = timezone.now(), run.done
            run.save(update_fields=["status", "requeues", "requeued_at", "resumed_from"])
            action = Action.RUN_REQUEUED
            summary = (
                f"Requeued run {run.pk} (its worker stopped) after {run.done} of "
                f"{run.total} scenarios"
            )
        audit_record(
            actor=None,
            action=action,
            summary=summary,
            version=run.version,
            changes={"run": run.pk, "done": run.done, "requeues": run.requeues},
        )
        if run.status == SuiteRun.Status.QUEUED:
            # Every chunk not finished goes back to the queue, to resume after its stored
            # scenarios; tasks of the earlier attempt find their chunk's attempt moved on.
            run.chunks.exclude(status=SuiteRunChunk.Status.FINISHED).update(
                status=SuiteRunChunk.Status.QUEUED, attempt=run.requeues
            )
            _enqueue(run)
    run.refresh_from_db()
    return run


def _stale_runs() -> QuerySet[SuiteRun]:
    """Running runs that lost a worker: a chunk is running, and no worker has written the run
    for `SUITE_RUN_STALE_SECONDS`. A run whose chunks are only queued (a stopped worker handed
    its chunk back, say) waits for a worker, as a queued run does: it is not stale."""
    cutoff = timezone.now() - dt.timedelta(seconds=settings.SUITE_RUN_STALE_SECONDS)
    running = SuiteRunChunk.objects.filter(run=OuterRef("pk"), status=SuiteRunChunk.Status.RUNNING)
    return SuiteRun.objects.filter(
        Exists(running), status=SuiteRun.Status.RUNNING, heartbeat_at__lt=cutoff
    )


def _enqueue(run: SuiteRun) -> None:
    """Queue a task per queued chunk of the run in the caller's transaction, so a worker sees
    them with the run; the run's `task_id` is its first chunk's."""
    first = None
    queued = run.chunks.filter(status=SuiteRunChunk.Status.QUEUED).order_by("number")
    for pk in list(queued.values_list("pk", flat=True)):
        result = tasks.execute_run_chunk.enqueue(pk)
        first = first or str(result.id)[:64]
    SuiteRun.objects.filter(pk=run.pk).update(task_id=first or "")
