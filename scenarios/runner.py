"""A suite run's execution: what the worker (`scenarios.tasks`) calls, and
`services.run_start(..., background=False)` in-process.

It imports neither the services nor the task (an import-linter contract in pyproject.toml
keeps it so): the services enqueue through `tasks`, `tasks` calls `run_execute` here.

Results are written with one prepared INSERT (`_ResultWriter`) and committed about once a
heartbeat interval together with the run's progress; every write checks that this worker
still holds the run (`_RunClaim`), so a worker whose run was requeued meanwhile writes
nothing more. See docs/scenarios.md, "The run lifecycle".
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
import traceback
from collections.abc import Mapping, Sequence
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from compiler import InvalidInput
from contracts.documents import ContractInvalid, compiled_contract, document_sha256
from contracts.services import audit_record

from . import compiling
from .audit import Action
from .models import Corpus, CorpusCandidate, Scenario, ScenarioResult, SuiteRun

logger = logging.getLogger(__name__)


class RunSuperseded(Exception):
    """This worker's claim on a run is gone: it was requeued while this worker still ran
    (a heartbeat came too late), and another worker now owns it."""


def _heartbeat_seconds() -> float:
    return settings.SUITE_RUN_HEARTBEAT_SECONDS


def run_execute(*, run_id: int) -> SuiteRun:
    """Compile every scenario of the run, committing results, progress and a heartbeat about
    every `SUITE_RUN_HEARTBEAT_SECONDS` so the progress bar moves and a stopped worker shows;
    a requeued run resumes after the scenarios whose results are already stored. The worker
    (or the immediate backend) calls this."""
    run = SuiteRun.objects.select_related("version__decision_type", "scenario").get(pk=run_id)
    # Claim the run: only a queued run starts, and only once, whoever else holds its task.
    now = timezone.now()
    claimed = SuiteRun.objects.filter(pk=run.pk, status=SuiteRun.Status.QUEUED).update(
        status=SuiteRun.Status.RUNNING,
        started_at=run.started_at or now,
        heartbeat_at=now,
    )
    if not claimed:
        return run
    run.refresh_from_db()
    claim = _RunClaim(run)
    started = time.perf_counter()
    writer = _ResultWriter()
    try:
        summary, contract_sha256 = _compile_run(run, writer, claim)
        summary["seconds"] = round(time.perf_counter() - started, 3)
        summary["compiles_per_second"] = (
            round(summary["compiles"] / summary["seconds"], 1) if summary["seconds"] else None
        )
        # The last results land with the outcome: one commit, one disk sync.
        with transaction.atomic():
            claim.update(
                status=SuiteRun.Status.FINISHED,
                finished_at=timezone.now(),
                contract_sha256=contract_sha256,
                summary=summary,
                done=F("total"),
            )
            writer.flush()
            audit_record(
                actor=None,
                action=Action.RUN_FINISHED,
                summary=f"Run {run.pk} finished: {summary['failures']} expectation failures, "
                f"{summary['flipped_slots']} flipped slots",
                version=run.version,
                changes={"run": run.pk, **summary},
            )
    except RunSuperseded:
        logger.warning("Run %s was requeued while this worker ran it; leaving it.", run.pk)
    except Exception as exc:  # the run records why it failed; the worker keeps going
        with contextlib.suppress(RunSuperseded):  # requeued meanwhile: not ours to fail
            claim.update(
                status=SuiteRun.Status.FAILED, finished_at=timezone.now(), error=_describe(exc)
            )
    run.refresh_from_db()
    return run


class _RunClaim:
    """Writes to a run this worker executes, only while it is still this worker's: the
    requeue count it was claimed under is unchanged and it is still running. Each write is
    also a heartbeat."""

    def __init__(self, run: SuiteRun) -> None:
        self.pk, self.attempt = run.pk, run.requeues

    def update(self, **fields: Any) -> None:
        updated = SuiteRun.objects.filter(
            pk=self.pk, requeues=self.attempt, status=SuiteRun.Status.RUNNING
        ).update(heartbeat_at=timezone.now(), **fields)
        if not updated:
            raise RunSuperseded(self.pk)



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


def _stored_totals(run: SuiteRun, totals: dict[str, int]) -> int:
    """Count the results a requeued run already stored into `totals`; the next position.

    Results and `done` are committed together, so the stored rows are exactly those of the
    first `done` scenarios."""
    rows = run.results.order_by("position").values(
        "position", "perturbation", "result", "expectation_failures", "flips"
    )
    scenario: list[dict[str, Any]] = []
    position = 0
    for row in rows.iterator():
        if not row["perturbation"] and scenario:
            _add_totals(totals, scenario)
            scenario = []
        scenario.append(row)
        position = row["position"] + 1
    if scenario:
        _add_totals(totals, scenario)
    return position


def _compile_run(
    run: SuiteRun, writer: _ResultWriter, claim: _RunClaim
) -> tuple[dict[str, Any], str]:
    """Compile the run's scenarios (after the `done` ones a requeued run already stored)
    into `writer`, committing with a heartbeat about every `SUITE_RUN_HEARTBEAT_SECONDS`
    (the last batch is left for the caller to commit with the outcome); the totals and the
    contract's sha256."""
    contract = compiled_contract(run.version)  # ContractInvalid fails the run
    contract_sha256 = document_sha256(contract.model_dump(mode="json"))
    scenarios = Scenario.objects.filter(decision_type=run.decision_type).select_related(
        "decision_type"
    )
    if run.scenario_id is not None:
        scenarios = scenarios.filter(pk=run.scenario_id)
    scenarios = list(scenarios.order_by("position", "name", "id"))
    totals = _new_totals()
    position = _stored_totals(run, totals) if run.done else 0
    remaining = scenarios[run.done :]
    corpora = _corpus_models({s.corpus_id for s in remaining})
    interval = _heartbeat_seconds()
    last_flush = time.perf_counter()
    for done, scenario in enumerate(remaining, start=run.done + 1):
        rows = _scenario_rows(run, scenario, contract, corpora[scenario.corpus_id], position)
        position += len(rows)
        writer.add(rows)
        # Each commit costs a disk sync: commit about once a heartbeat interval, not once
        # per scenario; the progress bar still moves.
        now = time.perf_counter()
        if done < len(scenarios) and now - last_flush >= interval:
            with transaction.atomic():
                # The run row first: a worker whose run was requeued writes nothing.
                claim.update(done=done, contract_sha256=contract_sha256)
                writer.flush()
            last_flush = now
        _add_totals(totals, rows)
    return totals, contract_sha256


class _ResultWriter:
    """Turns result rows into the parameters of one prepared INSERT and writes them in batches.

    A suite writes thousands of rows of which only the JSON columns need preparing; the ORM's
    `bulk_create` builds a statement with a placeholder per value and prepares every value,
    which cost more than the compiles themselves (see bench/sweep.py). Rows are turned into
    flat tuples of strings and numbers as soon as they are made, so the garbage collector has
    nothing to walk while they wait. The column list comes from the model, so the statement
    follows its migrations.
    """

    def __init__(self) -> None:
        fields = [f for f in ScenarioResult._meta.concrete_fields if not f.primary_key]
        quote = connection.ops.quote_name
        self.sql = "INSERT INTO {} ({}) VALUES ({})".format(
            quote(ScenarioResult._meta.db_table),
            ", ".join(quote(f.column) for f in fields),
            ", ".join(["%s"] * len(fields)),
        )
        self.columns = [(f.attname, f.get_internal_type() == "JSONField") for f in fields]
        self.adapt_json = connection.ops.adapt_json_value
        # Defaults prepared once: most rows leave several columns at their default.
        self.defaults = {
            name: self._prepare(ROW_DEFAULTS[name], is_json)
            for name, is_json in self.columns
            if name in ROW_DEFAULTS
        }
        self.pending: list[tuple[Any, ...]] = []

    def _prepare(self, value: Any, is_json: bool) -> Any:
        # None stays SQL NULL, as the ORM stores it.
        return self.adapt_json(value, None) if is_json and value is not None else value

    def add(self, rows: Sequence[dict[str, Any]]) -> None:
        prepare, defaults = self._prepare, self.defaults
        for row in rows:
            self.pending.append(
                tuple(
                    prepare(row[name], is_json) if name in row else defaults[name]
                    for name, is_json in self.columns
                )
            )

    def flush(self) -> None:
        with connection.cursor() as cursor:
            cursor.executemany(self.sql, self.pending)
        self.pending = []


def _corpus_models(ids: set[int]) -> dict[int, compiling.CorpusModels]:
    directories = dict(Corpus.objects.filter(pk__in=ids).values_list("pk", "directory"))
    rows: dict[int, list[dict[str, Any]]] = {pk: [] for pk in ids}
    candidates = CorpusCandidate.objects.filter(corpus_id__in=ids).order_by("position", "id")
    for corpus_id, data in candidates.values_list("corpus_id", "data"):
        rows[corpus_id].append(data)
    return {pk: compiling.CorpusModels.build(directories[pk], rows[pk]) for pk in ids}


# A result row as `_insert_results` takes it: the model's attnames, with these defaults.
ROW_DEFAULTS: dict[str, Any] = {
    "perturbation": "",
    "perturbation_args": None,
    "plan_id": "",
    "flips": None,
    "expectation_failures": [],
}


def _scenario_rows(
    run: SuiteRun,
    scenario: Scenario,
    contract: Any,
    corpus: compiling.CorpusModels,
    position: int,
) -> list[dict[str, Any]]:
    """The result rows of one scenario: its base first, then each perturbation."""
    common = {"run_id": run.pk, "scenario_id": scenario.pk, "scenario_name": scenario.name}
    try:
        document = compiling.scenario_input(scenario.request_document(), contract, corpus)
    except InvalidInput as exc:
        # A scenario the compiler cannot read fails its expectations; it has no perturbations.
        return [common | _invalid_row(exc, position)]
    swept = compiling.sweep_scenario(document, run.weak_classes, keep_models=False)
    base = swept.base
    base_sha256 = compiling.input_sha256(base.document)
    rows = [common | _base_row(scenario, base, base_sha256, position)]
    for offset, variant in enumerate(swept.variants, start=1):
        rows.append(
            common
            | {
                "position": position + offset,
                "perturbation": variant.name,
                "perturbation_args": variant.perturbation,
                "input_sha256": compiling.variant_sha256(base_sha256, variant.perturbation),
                "result": variant.result,
                "plan_id": variant.plan_id,
                "duration_ms": variant.duration_ms,
                "output_json": variant.output_json,
                "slot_states": variant.slot_states,
                "flips": variant.flips,
            }
        )
    return rows


def _invalid_row(exc: InvalidInput, position: int) -> dict[str, Any]:
    """The one row of a scenario whose input the compiler refuses: one `input` failure per
    problem."""
    return {
        "position": position,
        "input_sha256": "",
        "result": "invalid",
        "duration_ms": 0.0,
        "output_json": _json(exc.to_json()),
        "slot_states": {},
        "expectation_failures": [
            {"what": "input", "key": _where(e["loc"]), "expected": "valid", "actual": e["msg"]}
            for e in exc.errors
        ],
    }


def _base_row(
    scenario: Scenario, base: compiling.Compiled, base_sha256: str, position: int
) -> dict[str, Any]:
    """The scenario's base compile, checked against its expectations."""
    return {
        "position": position,
        "input_sha256": base_sha256,
        "result": base.result,
        "plan_id": base.plan_id,
        "duration_ms": base.duration_ms,
        "output_json": base.output_json,
        "slot_states": base.slot_states,
        "expectation_failures": compiling.expectation_failures(
            base.output,
            base.slot_states,
            expected_slots=scenario.expected_slots,
            expected_admitted=scenario.expected_admitted,
            expected_rejected=scenario.expected_rejected,
        ),
    }


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _where(loc: Sequence[Any]) -> str:
    return ".".join(str(part) for part in loc)
