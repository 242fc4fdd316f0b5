"""A suite-strength run: every owner mistake applied to a version's contract as a mutant, the
version's scenarios run against each (`compiler.run_mutation`), and the report of
which mutants the suite kills. Re-exported by `scenarios.models`, where Django finds it; kept
apart because the suite's own models already fill that module.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Q

from contracts.models import ContractVersion, DecisionType

from .run_state import RunProgress, RunStatus


class MutationRun(RunProgress, models.Model):
    """One suite-strength run of one version: its progress while the worker computes it,
    then the engine's report (`MutationReport.to_json()`)."""

    decision_type = models.ForeignKey(
        DecisionType, on_delete=models.PROTECT, related_name="mutation_runs"
    )
    version = models.ForeignKey(
        ContractVersion, on_delete=models.PROTECT, related_name="mutation_runs"
    )
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.QUEUED)
    # Mutants tried so far of `total` (the engine's progress; 0 of 0 until it has made them).
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    # What was run: the contract's sha256, the scenarios (names) and the catalogue used.
    contract_sha256 = models.CharField(max_length=64, blank=True)
    scenarios = models.JSONField(default=list, blank=True)
    # Scenarios the compiler could not read, left out of the run: [{"name", "error"}].
    skipped = models.JSONField(default=list, blank=True)
    catalogue = models.JSONField(default=dict, blank=True)  # class key -> authority tier
    weak_classes = models.JSONField(default=list, blank=True)
    # The engine's report once finished: score, totals, mutants (docs/scenarios.md).
    report = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    task_id = models.CharField(max_length=64, blank=True)
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Written with each progress update: a running run whose heartbeat is older than
    # settings.SUITE_RUN_STALE_SECONDS lost its worker, and the page fails it.
    heartbeat_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(done__lte=models.F("total")), name="mutation_run_progress"
            )
        ]

    def __str__(self) -> str:
        return f"suite strength {self.pk} of {self.version}"

    @property
    def mutants(self) -> list[dict[str, Any]]:
        return list(self.report.get("mutants", []))
