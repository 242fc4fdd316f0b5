"""A suite run's execution: what the worker (`scenarios.tasks`) calls, and
`services.run_start(..., background=False)` in-process.

It imports neither the services nor the task (an import-linter contract in pyproject.toml
keeps it so): the services enqueue through `tasks`, `tasks` calls `run_execute` here.

Results are written with one prepared INSERT (`ResultWriter`) and committed about once a
heartbeat interval together with the run's progress; every write checks that this worker
still holds the run (`_RunClaim`), so a worker whose run was requeued meanwhile writes
nothing more. See docs/scenarios.md, "The run lifecycle".
"""

from __future__ import annotations

import contextlib
import logging
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from compiler import contract_sha256 as remembered_contract_sha256
from contracts.documents import ContractInvalid, compiled_contract
from contracts.services import audit_record
from workers import stopping

from .audit import Action
from .models import SuiteRun, SuiteRunChunk
from .result_rows import (  # the rows a run stores (tests patch them here)
    POSITION_STRIDE,
    SweepMemo,
    _corpus_models,
    _scenario_rows,
)
from .result_writer import ResultWriter
from .run_groups import GroupTally, merged_groups, run_groups

logger = logging.getLogger(__name__)


class RunSuperseded(Exception):
    """This worker's claim on a run is gone: it was requeued while this worker still ran
    (a heartbeat came too late), and another worker now owns it."""


def _heartbeat_seconds() -> float:
    return settings.SUITE_RUN_HEARTBEAT_SECONDS


TOO_MANY_COMPILES = "Scenario {name!r} gave {count} compiles; a scenario may give at most {most}."


def chunk_scenarios() -> int:
    """Scenarios per chunk: small enough that a worker asked to stop (SIGTERM, which lets the
    task in hand finish) stops within seconds, large enough that the per-chunk setup (the
    contract, the corpora) stays small beside the compiles."""
    return settings.SUITE_RUN_CHUNK_SCENARIOS


# Called, in the transaction that puts a chunk back in the queue, with the chunk's id: queues
# a task for it (`tasks` passes its own `enqueue`; the runner imports no task).
HandBack = Callable[[int], object]


def run_execute(*, run_id: int, hand_back: HandBack | None = None) -> SuiteRun:
    """Compile every chunk of the run still queued, one after another, here: what
    `services.run_start(..., background=False)` does (the worker takes one chunk a task).
    A worker asked to stop meanwhile hands the chunk in hand and the rest to `hand_back`."""
    chunks = SuiteRunChunk.objects.filter(run_id=run_id, status=SuiteRunChunk.Status.QUEUED)
    for pk in list(chunks.order_by("number").values_list("pk", flat=True)):
        if stopping.requested() and hand_back is not None:
            hand_back(pk)  # still queued: a task of its own, for another worker
            continue
        chunk_execute(chunk_id=pk, hand_back=hand_back)
    return SuiteRun.objects.get(pk=run_id)


def chunk_execute(
    *, chunk_id: int, worker: str = "", hand_back: HandBack | None = None
) -> SuiteRun:
    """Compile one chunk of a run, committing results, progress and a heartbeat about every
    `SUITE_RUN_HEARTBEAT_SECONDS` so the progress bar moves and a stopped worker shows; a
    requeued chunk resumes after its scenarios whose results are already stored. The last
    chunk to finish finishes the run. The worker (or the immediate backend) calls this.

    A worker asked to stop (`stopping.requested()`, SIGTERM) stops at its next commit and
    gives the chunk back: queued again, resuming after what it stored, with a task from
    `hand_back` in the same transaction, so another worker takes it at once."""
    chunk = SuiteRunChunk.objects.select_related("run").get(pk=chunk_id)
    run = chunk.run
    # Claim the run (the first chunk to start does) and the chunk: only a queued chunk of the
    # run's current attempt starts, and only once, whoever else holds a task for it.
    now = timezone.now()
    with transaction.atomic():
        SuiteRun.objects.filter(pk=run.pk, status=SuiteRun.Status.QUEUED).update(
            status=SuiteRun.Status.RUNNING, started_at=Coalesce("started_at", Value(now))
        )
        claimed = SuiteRunChunk.objects.filter(
            pk=chunk.pk,
            status=SuiteRunChunk.Status.QUEUED,
            run__status=SuiteRun.Status.RUNNING,
            run__requeues=F("attempt"),
        ).update(status=SuiteRunChunk.Status.RUNNING, claimed_by=worker[:200], heartbeat_at=now)
        if claimed:
            SuiteRun.objects.filter(pk=run.pk).update(heartbeat_at=now)
    if not claimed:
        return run
    chunk.refresh_from_db()
    run = SuiteRun.objects.select_related(
        "decision_type", "version__decision_type", "scenario"
    ).get(pk=run.pk)
    claim = _RunClaim(run, chunk)
    writer = ResultWriter(groups=_chunk_tally(chunk))
    try:
        totals, contract_sha256 = _compile_chunk(run, chunk, writer, claim)
        # The last results land with the chunk's outcome (and the run's, if it is the last):
        # one commit, one disk sync. The rows first, then the run's row (which every
        # worker's chunk updates: its lock, which also makes the last chunk's finishing check
        # see every other chunk's outcome, is held only from there to the commit) and the
        # chunk's, in the order a requeue locks them.
        with transaction.atomic():
            writer.flush()
            claim.update(
                chunk.count - claim.committed,
                tally=writer.kept_groups(),
                contract_sha256=contract_sha256,
            )
            SuiteRunChunk.objects.filter(pk=chunk.pk).update(
                status=SuiteRunChunk.Status.FINISHED, totals=totals
            )
            _finish_if_last(run, claim)
    except RunSuperseded:
        logger.warning("Run %s was requeued while this worker ran it; leaving it.", run.pk)
    except stopping.WorkerStopping:
        _hand_back(claim, hand_back)
    except Exception as exc:  # the run records why it failed; the worker keeps going
        with contextlib.suppress(RunSuperseded):  # requeued meanwhile: not ours to fail
            claim.update(
                0, status=SuiteRun.Status.FAILED, finished_at=timezone.now(), error=_describe(exc)
            )
    except BaseException:
        if stopping.requested():  # stopped at once (a second SIGTERM): give the chunk back
            with contextlib.suppress(Exception):
                _hand_back(claim, hand_back)
        raise
    run.refresh_from_db()
    return run


def _hand_back(claim: _RunClaim, hand_back: HandBack | None) -> None:
    """The chunk, still this worker's, goes back to the queue with what it committed (its
    `done`), and `hand_back` queues a task for it in the same transaction. Without
    `hand_back` it stays running, for the heartbeat's requeue."""
    if hand_back is None:
        return
    with transaction.atomic():
        handed = SuiteRunChunk.objects.filter(
            pk=claim.chunk,
            status=SuiteRunChunk.Status.RUNNING,
            attempt=claim.attempt,
            run__requeues=claim.attempt,
            run__status=SuiteRun.Status.RUNNING,
        ).update(status=SuiteRunChunk.Status.QUEUED, claimed_by="")
        if handed:
            hand_back(claim.chunk)
    if handed:
        logger.info("Asked to stop: chunk %s of run %s handed back", claim.chunk, claim.pk)


def _finish_if_last(run: SuiteRun, claim: _RunClaim) -> None:
    """With the run row locked: if every chunk is finished, the run is, with the summed
    totals and a `run.finished` audit event."""
    chunks = SuiteRunChunk.objects.filter(run_id=run.pk)
    if chunks.exclude(status=SuiteRunChunk.Status.FINISHED).exists():
        return
    # The counts, then the timings worked out from them.
    summary: dict[str, Any] = dict(_new_totals())
    for totals in chunks.values_list("totals", flat=True):
        for key, value in totals.items():
            summary[key] += value
    started = SuiteRun.objects.values_list("started_at", flat=True).get(pk=run.pk)
    finished_at = timezone.now()
    summary["seconds"] = round((finished_at - (started or finished_at)).total_seconds(), 3)
    summary["compiles_per_second"] = (
        round(summary["compiles"] / summary["seconds"], 1) if summary["seconds"] else None
    )
    # Its rows change no more: what its pages add up is grouped once, here, from the chunks'
    # tallies (or, if a chunk kept none, from the rows).
    groups = merged_groups(chunks.values_list("groups", flat=True)) or run_groups(run)
    claim.update(
        0, status=SuiteRun.Status.FINISHED, finished_at=finished_at, summary=summary, groups=groups
    )
    audit_record(
        actor=None,
        action=Action.RUN_FINISHED,
        summary=f"Run {run.pk} finished: {summary['failures']} expectation failures, "
        f"{summary['flipped_slots']} flipped slots",
        version=run.version,
        changes={"run": run.pk, **summary},
    )


class _RunClaim:
    """Writes to a run this worker executes a chunk of, only while it is still this
    worker's: the requeue count its chunk was claimed under is unchanged and the run is still
    running. Each write is also a heartbeat, and adds the chunk's newly stored scenarios to
    the run's `done`."""

    def __init__(self, run: SuiteRun, chunk: SuiteRunChunk) -> None:
        self.pk, self.attempt, self.chunk = run.pk, run.requeues, chunk.pk
        self.committed = chunk.done  # the chunk's scenarios counted into the run's `done`

    def update(self, done: int, tally: dict[str, Any] | None = None, **fields: Any) -> None:
        """`done`: scenarios stored since the last write; `tally`: the chunk's tally of all
        it stored, if it keeps one. The run's row, then the chunk's (the order
        `run_requeue_if_stale` locks them in); a caller writes its result rows before, so the
        run's row lock (every worker of the run takes it) is held briefly."""
        now = timezone.now()
        with transaction.atomic(savepoint=False):  # both rows or neither
            updated = SuiteRun.objects.filter(
                pk=self.pk, requeues=self.attempt, status=SuiteRun.Status.RUNNING
            ).update(heartbeat_at=now, done=F("done") + done, **fields)
            if not updated:
                raise RunSuperseded(self.pk)
            kept = {} if tally is None else {"groups": tally}
            SuiteRunChunk.objects.filter(pk=self.chunk).update(
                done=self.committed + done, heartbeat_at=now, **kept
            )
        self.committed += done

    def commit(self, writer: ResultWriter, done: int, **fields: Any) -> None:
        """Commit the writer's rows with the progress they make (`done`: the chunk's
        scenarios stored, in all). The rows first: a run requeued meanwhile rolls them back.
        Then `stopping.WorkerStopping` if the worker was asked to stop."""
        with transaction.atomic():
            writer.flush()
            self.update(done - self.committed, tally=writer.kept_groups(), **fields)
        if stopping.requested():
            raise stopping.WorkerStopping


def _chunk_tally(chunk: SuiteRunChunk) -> GroupTally | None:
    """The chunk's group tally: what it committed before a requeue, or a new one; None for a
    chunk that stored rows before chunks kept tallies (it keeps none, and the run's groups
    are counted from its rows)."""
    if "verdicts" in chunk.groups:
        return GroupTally.from_json(chunk.groups)
    return None if chunk.done else GroupTally()


def _describe(exc: Exception) -> str:
    if isinstance(exc, ContractInvalid):
        return str(exc)
    return "".join(traceback.format_exception_only(exc)).strip()


def _new_totals() -> dict[str, int]:
    return {
        "scenarios": 0,
        "perturbations": 0,
        "compiles": 0,
        "failures": 0,
        "failing_scenarios": 0,
        "flipped_slots": 0,
        "variants_with_flips": 0,
        "refused": 0,
        "invalid": 0,
    }


def _add_totals(totals: dict[str, int], rows: Sequence[Mapping[str, Any]]) -> None:
    """Count one scenario's rows (its base first) into the run's totals."""
    base, variants = rows[0], rows[1:]
    totals["scenarios"] += 1
    totals["perturbations"] += len(variants)
    totals["compiles"] += len(rows)
    totals["failures"] += len(base["expectation_failures"])
    totals["failing_scenarios"] += bool(base["expectation_failures"])
    totals["refused"] += sum(r["result"] == "refused" for r in rows)
    totals["invalid"] += sum(r["result"] == "invalid" for r in rows)
    for row in variants:
        flipped = len(row["flips"]["slots"]) if row["flips"] else 0
        totals["flipped_slots"] += flipped
        totals["variants_with_flips"] += bool(flipped)


def _stored_totals(run: SuiteRun, chunk: SuiteRunChunk, totals: dict[str, int]) -> None:
    """Count the results a requeued chunk already stored into `totals`.

    Results and `done` are committed together, so the stored rows are exactly those of the
    chunk's first `done` scenarios."""
    first = chunk.first * POSITION_STRIDE
    rows = run.results.filter(
        position__gte=first, position__lt=(chunk.first + chunk.done) * POSITION_STRIDE
    ).order_by("position")
    values = rows.values("position", "perturbation", "result", "expectation_failures", "flips")
    scenario: list[Mapping[str, Any]] = []
    for row in values.iterator():
        if not row["perturbation"] and scenario:
            _add_totals(totals, scenario)
            scenario = []
        scenario.append(row)
    if scenario:
        _add_totals(totals, scenario)


def _compile_chunk(
    run: SuiteRun, chunk: SuiteRunChunk, writer: ResultWriter, claim: _RunClaim
) -> tuple[dict[str, Any], str]:
    """Compile the chunk's scenarios (after the `done` ones a requeued chunk already stored)
    into `writer`, committing with a heartbeat about every `SUITE_RUN_HEARTBEAT_SECONDS`
    (the last batch is left for the caller to commit with the outcome); the chunk's totals
    and the contract's sha256."""
    contract = compiled_contract(run.version)  # ContractInvalid fails the run
    # `document_sha256` of the contract's JSON, which is what the compiler hashes into every
    # output; asking the compiler remembers it for this contract object, so the chunk's first
    # compile does not serialise and hash the same contract a second time.
    contract_sha256 = remembered_contract_sha256(contract)
    # Through the run's decision type, so each scenario is given that one object as its own
    # (the ORM's known related objects) rather than a copy joined onto every row.
    scenarios = run.decision_type.scenarios.all()
    if run.scenario_id is not None:
        scenarios = scenarios.filter(pk=run.scenario_id)
    else:  # a suite run compiles the live scenarios (archived ones are kept, not run)
        scenarios = scenarios.live()
    ordered = scenarios.order_by("position", "name", "id")
    mine = list(ordered[chunk.first : chunk.first + chunk.count])
    totals = _new_totals()
    if chunk.done:
        _stored_totals(run, chunk, totals)
    remaining = mine[chunk.done :]
    corpora = _corpus_models({s.corpus_id for s in remaining})
    interval = _heartbeat_seconds()
    last_flush = time.perf_counter()
    memo: SweepMemo = {}
    for done, scenario in enumerate(remaining, start=chunk.done + 1):
        position = (chunk.first + done - 1) * POSITION_STRIDE
        corpus = corpora[scenario.corpus_id]
        rows = _scenario_rows(run, scenario, contract, corpus, position, memo)
        if len(rows) > POSITION_STRIDE:
            raise ValueError(
                TOO_MANY_COMPILES.format(name=scenario.name, count=len(rows), most=POSITION_STRIDE)
            )
        writer.add(rows)
        # Each commit costs a disk sync: commit about once a heartbeat interval, not once
        # per scenario; the progress bar still moves.
        now = time.perf_counter()
        if done < len(mine) and now - last_flush >= interval:
            claim.commit(writer, done, contract_sha256=contract_sha256)
            last_flush = now
        _add_totals(totals, rows)
    return totals, contract_sha256
