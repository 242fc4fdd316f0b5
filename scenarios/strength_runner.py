"""A suite-strength run's execution: what the worker (`scenarios.tasks.execute_mutation_run`)
calls. It builds each scenario's compile input the way a suite run does
(`compiling.scenario_input`), hands them with the scenarios' expectations to the mutation
engine (`compiler.run_mutation`), writes the engine's progress to the run's row as it
goes and stores its report.

It imports neither the services nor the task (an import-linter contract in pyproject.toml
keeps it so).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.utils import timezone

from compiler import (
    Contract,
    InvalidInput,
    MutationCase,
    Perturbation,
    VariantExpectation,
    contract_sha256,
    run_mutation,
)
from contracts.documents import compiled_contract
from contracts.services import audit_record

from . import compiling
from .audit import Action
from .expectations import expected_document
from .models import MutationRun, Scenario
from .result_rows import _corpus_models
from .runner import _describe

NO_READABLE_SCENARIOS = "None of the {count} scenarios could be compiled; nothing to mutate."


def mutation_execute(*, run_id: int) -> MutationRun:
    """Compute the run, if it is still queued (a second task for it does nothing): its
    progress is written about every `SUITE_RUN_HEARTBEAT_SECONDS`, its report or its error
    when it ends."""
    claimed = MutationRun.objects.filter(pk=run_id, status=MutationRun.Status.QUEUED).update(
        status=MutationRun.Status.RUNNING, started_at=timezone.now(), heartbeat_at=timezone.now()
    )
    run = MutationRun.objects.select_related("version__decision_type").get(pk=run_id)
    if not claimed:
        return run
    try:
        contract = compiled_contract(run.version)  # ContractInvalid fails the run
        cases, skipped = _cases(run, contract)
        _still_running(run.pk).update(
            contract_sha256=contract_sha256(contract),
            scenarios=[case.name for case in cases],
            skipped=skipped,
        )
        if not cases:
            raise ValueError(NO_READABLE_SCENARIOS.format(count=len(skipped)))
        report = run_mutation(
            contract,
            cases,
            catalogue={key: int(tier) for key, tier in run.catalogue.items()},
            weak_classes=tuple(run.weak_classes),
            progress=_Progress(run.pk),
        ).to_json()
    except Exception as exc:  # the run records why it failed; the worker keeps going
        _still_running(run.pk).update(
            status=MutationRun.Status.FAILED, finished_at=timezone.now(), error=_describe(exc)
        )
        run.refresh_from_db()
        audit_record(
            actor=None,
            action=Action.STRENGTH_FAILED,
            summary=f"Suite strength {run.pk} of version {run.version.number} failed: {run.error}",
            version=run.version,
            changes={"strength_run": run.pk},
        )
        return run
    totals = report["totals"]
    _still_running(run.pk).update(
        status=MutationRun.Status.FINISHED,
        finished_at=timezone.now(),
        report=report,
        total=totals["mutants"],
        done=totals["mutants"],
    )
    run.refresh_from_db()
    audit_record(
        actor=None,
        action=Action.STRENGTH_FINISHED,
        summary=f"Suite strength {run.pk} of version {run.version.number}: "
        f"{totals['killed']} of {totals['mutants']} mutants killed, "
        f"{totals['surviving']} surviving, {totals['equivalent']} equivalent",
        version=run.version,
        changes={"strength_run": run.pk, "score": report["score"], **_counts(totals)},
    )
    return run


def _still_running(pk: int):
    """The run's row while it is still this worker's to write (the page may have failed it
    as stale meanwhile: then nothing more is written)."""
    return MutationRun.objects.filter(pk=pk, status=MutationRun.Status.RUNNING)


def _counts(totals: dict[str, Any]) -> dict[str, int]:
    return {key: totals[key] for key in ("mutants", "killed", "surviving", "equivalent")}


def _cases(run: MutationRun, contract: Contract) -> tuple[list[Any], list[dict[str, str]]]:
    """Each scenario of the version's decision type as the engine's case (its compile input,
    built as a suite run builds it, and its expectations), in suite order; and the scenarios
    the compiler cannot read, with why."""
    scenarios: Sequence[Scenario] = list(
        run.version.decision_type.scenarios.live().order_by("position", "name", "id")
    )
    corpora = _corpus_models({s.corpus_id for s in scenarios})
    cases, skipped = [], []
    for scenario in scenarios:
        try:
            document = compiling.scenario_input(
                scenario.request_document(), contract, corpora[scenario.corpus_id]
            )
        except InvalidInput as exc:
            skipped.append({"name": scenario.name, "error": str(exc)})
            continue
        cases.append(
            MutationCase(
                scenario.name,
                document,
                expected_document(scenario),
                variants=variant_expectations(scenario),
            )
        )
    return cases, skipped


def variant_expectations(scenario: Scenario) -> list[tuple[Perturbation, dict[str, Any]]]:
    """The owner's expectations on single perturbations of the scenario as the engine takes
    them: each perturbation once, with the slot states expected under it."""
    by_perturbation: dict[str, tuple[Perturbation, dict[str, Any]]] = {}
    for item in scenario.variant_expectations:
        expectation = VariantExpectation.model_validate(item)
        perturbation = expectation.perturbation
        key = json.dumps([perturbation.operator, perturbation.args], sort_keys=True)
        _, expected = by_perturbation.setdefault(key, (perturbation, {"slots": {}}))
        expected["slots"][expectation.proposition] = expectation.state
    return list(by_perturbation.values())


class _Progress:
    """The engine's progress callback: the row's `done` of `total` and its heartbeat, written
    at the first call, the last and about once a heartbeat interval between."""

    def __init__(self, pk: int) -> None:
        self.pk = pk
        self.interval = settings.SUITE_RUN_HEARTBEAT_SECONDS
        self.last: float | None = None

    def __call__(self, done: int, total: int) -> None:
        now = time.perf_counter()
        if self.last is not None and done < total and now - self.last < self.interval:
            return
        self.last = now
        _still_running(self.pk).update(
            done=min(done, total), total=total, heartbeat_at=timezone.now()
        )
