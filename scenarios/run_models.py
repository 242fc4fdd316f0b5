"""A suite run, its chunks (one task each), the results it stores (one per compile) and the
pieces of its stored report. Re-exported by `scenarios.models`, where Django finds them; kept
apart because the corpora and scenarios already fill that module.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Q

from contracts.models import ContractVersion, DecisionType

from .fields import ResultJSONField
from .run_state import RunProgress, RunStatus


class SuiteRun(RunProgress, models.Model):
    """One run: every scenario of a decision type (or one of them) against one version."""

    decision_type = models.ForeignKey(
        DecisionType, on_delete=models.PROTECT, related_name="suite_runs"
    )
    version = models.ForeignKey(
        ContractVersion, on_delete=models.PROTECT, related_name="suite_runs"
    )
    # Set for a one-scenario run; null runs the whole suite.
    scenario = models.ForeignKey(
        "scenarios.Scenario", on_delete=models.SET_NULL, null=True, blank=True, related_name="runs"
    )
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.QUEUED)
    total = models.PositiveIntegerField(default=0)  # scenarios to compile
    done = models.PositiveIntegerField(default=0)  # scenarios compiled so far
    # What was compiled: the contract's sha256 and the weak classes substituted.
    contract_sha256 = models.CharField(max_length=64, blank=True)
    weak_classes = models.JSONField(default=list, blank=True)
    # The catalogue's authority tiers (class key -> tier) the contract probes judged by.
    catalogue = models.JSONField(default=dict, blank=True)
    # Totals once finished: scenarios, perturbations, compiles, failures, flips, seconds.
    summary = models.JSONField(default=dict, blank=True)
    # A finished run's rows grouped as its pages add them up (scenarios.run_groups), stored
    # when it finishes: {"verdicts": [...], "states": [...]}; empty until then.
    groups = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    task_id = models.CharField(max_length=64, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The worker's sign of life, written with each progress commit: a running run whose
    # heartbeat is older than settings.SUITE_RUN_STALE_SECONDS lost its worker (killed, say)
    # and is requeued, resuming after the `done` scenarios whose results are stored.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    requeues = models.PositiveSmallIntegerField(default=0)  # times requeued after a stop
    requeued_at = models.DateTimeField(null=True, blank=True)
    resumed_from = models.PositiveIntegerField(default=0)  # `done` when last requeued

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(done__lte=models.F("total")), name="run_progress")
        ]

    def __str__(self) -> str:
        return f"run {self.pk} of {self.version}"


class SuiteRunChunk(models.Model):
    """A slice of a run's scenarios (`first`, `count`, in run order) that one worker compiles:
    a run is split into chunks, one task each, so any number of workers share a large run
    (each claims tasks with `skip_locked` on PostgreSQL). `done` counts the chunk's scenarios
    whose results are stored, `attempt` the run's `requeues` it was queued under (a task of an
    earlier attempt finds it and does nothing), `totals` its share of the run's summary and
    `groups` its share of the run's groups."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        FINISHED = "finished", "Finished"

    run = models.ForeignKey(SuiteRun, on_delete=models.CASCADE, related_name="chunks")
    number = models.PositiveIntegerField()
    first = models.PositiveIntegerField()  # index of its first scenario in the run's order
    count = models.PositiveIntegerField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    done = models.PositiveIntegerField(default=0)
    attempt = models.PositiveSmallIntegerField(default=0)
    totals = models.JSONField(default=dict, blank=True)
    # Its committed rows grouped as the run's pages add them up (`run_groups.GroupTally`),
    # committed with them: the last chunk adds the chunks' up. Empty on a chunk that began
    # before chunks kept them.
    groups = models.JSONField(default=dict, blank=True)
    claimed_by = models.CharField(max_length=200, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run", "number"]
        constraints = [
            models.UniqueConstraint(fields=["run", "number"], name="chunk_number_unique"),
            models.CheckConstraint(condition=Q(done__lte=models.F("count")), name="chunk_progress"),
        ]

    def __str__(self) -> str:
        return f"chunk {self.number} of {self.run}"


class ScenarioResult(models.Model):
    """One compile of a run: a scenario's base (perturbation "") or one of its variants."""

    # No index of its own: the (run, position) unique constraint's index serves every lookup.
    run = models.ForeignKey(
        SuiteRun, on_delete=models.CASCADE, related_name="results", db_index=False
    )
    scenario = models.ForeignKey(
        "scenarios.Scenario", on_delete=models.SET_NULL, null=True, related_name="results"
    )
    scenario_name = models.CharField(max_length=160)
    # Row order inside the run: scenario order, then base (0) before its perturbations.
    position = models.PositiveIntegerField()
    perturbation = models.CharField(max_length=300, blank=True)  # its name; "" for the base
    perturbation_args = ResultJSONField(null=True, blank=True)  # Perturbation.to_json()
    # The base's: sha256 of its input JSON; a variant's: derived from the base's hash, the
    # compiler version and the perturbation (compiling.variant_sha256).
    input_sha256 = models.CharField(max_length=64)
    result = models.CharField(max_length=16)  # compiled | refused | invalid
    plan_id = models.CharField(max_length=64, blank=True)
    duration_ms = models.FloatField()
    # The compiler's output document, as the compiler serialised it (kept as text: it is only
    # ever read back whole, and storing the compiler's own bytes keeps a run cheap). A base's
    # and an invalid scenario's; empty on a variant, whose output `scenarios.replay` compiles
    # again from the base's `input_json` (rows stored before that kept theirs here).
    output_json = models.TextField(blank=True)
    slot_states = ResultJSONField(default=dict)
    # compiler._perturb.flips() against the scenario's base, with the perturbation in plain
    # words (`label`) and its worst `verdict`; null on the base row.
    flips = ResultJSONField(null=True, blank=True)
    # The variant's verdicts counted per proposition ("" for the variant as
    # a whole) and kind, {"fact_00": {"expected": 1}, ...}, keys sorted: what the run's
    # verdict summary adds up. Variants judged alike store the same value, so the summary
    # groups by it and never reads `flips`. Null on a base and a variant without verdicts.
    verdict_counts = ResultJSONField(null=True, blank=True)
    # [{"what": "slot"|"admitted"|"rejected"|"decision_ready"|"blocking"|"required"|
    #   "resource_ids"|"input", "key": ..., "expected": ..., "actual": ...}]
    # (`compiler.output_failures`; rows stored before the pins hold the first three).
    expectation_failures = ResultJSONField(default=list, blank=True)
    # The base's input as the compiler serialised it (what `input_sha256` hashes): what a
    # variant is compiled again from. Null on a variant and an invalid scenario. Last in the
    # row, so SQLite reads the columns before it without walking its overflow pages; null
    # rather than empty, so adding it to a large table is an ALTER TABLE, not a rebuild.
    input_json = models.TextField(null=True, blank=True)
    # The variant's verdicts (compiler.judge, as JSON): `judged` reads them. Null on
    # a base, and on rows stored before they had a column (theirs are in `flips`). Apart from
    # `flips`, so what reads the flips (the JSON report) does not parse them.
    verdicts = ResultJSONField(null=True, blank=True)

    class Meta:
        ordering = ["run", "position"]
        constraints = [
            models.UniqueConstraint(fields=["run", "position"], name="result_position_unique")
        ]

    def __str__(self) -> str:
        return f"{self.scenario_name} {self.perturbation or 'base'}"

    @property
    def is_base(self) -> bool:
        return not self.perturbation

    @property
    def output(self) -> dict[str, Any]:
        """The stored output: a base's (a variant's is compiled again, selectors.packet_view)."""
        if not self.output_json:
            raise ValueError(f"{self} stores no output: selectors.packet_view compiles it")
        return json.loads(self.output_json)

    @property
    def judged(self) -> list[dict[str, Any]]:
        """The variant's verdicts: their column, or `flips` on rows stored before it."""
        if self.verdicts is not None:
            return self.verdicts
        return (self.flips or {}).get("verdicts", [])

    @property
    def violations_and_findings(self) -> list[dict[str, Any]]:
        """The verdicts a reviewer reads (not the expected ones), violations first."""
        judged = [v for v in self.judged if v["kind"] != "expected"]
        return sorted(judged, key=lambda v: v["kind"] != "violation")

    @property
    def flipped_propositions(self) -> set[str]:
        return {f["proposition"] for f in (self.flips or {}).get("slots", [])}


class SuiteRunReportPiece(models.Model):
    """The report items (`selectors.run_report_stream`) of the result rows one commit of a run
    stored, written by the result writer in the same transaction (`scenarios.stored_reports`):
    a finished run's report is put together from its pieces, in row order, instead of being
    taken apart from every row again (at 10,000 scenarios a report of 55 MB, which PostgreSQL
    took 1.3 s of its own time to assemble), and finishing the run reads no row back."""

    run = models.ForeignKey(SuiteRun, on_delete=models.CASCADE, related_name="report_pieces")
    first = models.PositiveIntegerField()  # the position of its first row
    scenarios = models.PositiveIntegerField()  # the scenarios whose rows it holds the items of
    # The items' JSON texts, joined as the report joins them.
    failures = models.TextField(blank=True)
    flips = models.TextField(blank=True)

    class Meta:
        ordering = ["run", "first"]
        constraints = [
            models.UniqueConstraint(fields=["run", "first"], name="report_piece_first_unique")
        ]

    def __str__(self) -> str:
        return f"report piece from row {self.first} of {self.run}"


class SuiteRunReportPart(models.Model):
    """A part of the JSON report of a run finished when reports were written whole as a run
    finished; read back in order (`selectors.run_report_stream`). Runs now keep their reports
    in pieces as they commit (`SuiteRunReportPiece`)."""

    run = models.ForeignKey(SuiteRun, on_delete=models.CASCADE, related_name="report_parts")
    number = models.PositiveIntegerField()
    text = models.TextField()

    class Meta:
        ordering = ["run", "number"]
        constraints = [
            models.UniqueConstraint(fields=["run", "number"], name="report_part_number_unique")
        ]

    def __str__(self) -> str:
        return f"part {self.number} of the report of {self.run}"
