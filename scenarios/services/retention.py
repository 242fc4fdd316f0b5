"""Retention of suite runs: a run of a large suite stores hundreds of megabytes of results,
so old runs are deleted on a schedule (`manage.py prune_runs`, and the worker once a day).

Kept: every run still queued or running; the last `RUN_RETENTION_PER_VERSION` runs of each
version (by start); and, for each version that is or was published (published, superseded,
retired), its latest finished whole-suite run — the evidence behind a publication. The rest
are deleted with their results, each with a `run.pruned` audit event on its version.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction

from contracts.models import ContractVersion
from contracts.services import audit_record
from scenarios.audit import Action
from scenarios.models import ScenarioResult, SuiteRun

PUBLISHED_STATUSES = (
    ContractVersion.Status.PUBLISHED,
    ContractVersion.Status.SUPERSEDED,
    ContractVersion.Status.RETIRED,
)
DELETE_BATCH = 5000  # result rows deleted per statement


@dataclass
class PruneReport:
    kept: int = 0
    deleted: list[int] = field(default_factory=list)  # run ids
    results: int = 0  # result rows deleted (or, in a dry run, that would be)


def runs_to_prune(*, keep: int | None = None) -> tuple[list[int], int]:
    """The ids of the runs the policy deletes, and how many it keeps."""
    keep = settings.RUN_RETENTION_PER_VERSION if keep is None else keep
    runs = SuiteRun.objects.order_by("version_id", "-created_at", "-id").values_list(
        "pk", "version_id", "status", "scenario_id", "version__status"
    )
    prune: list[int] = []
    kept = 0
    seen: dict[int, int] = {}
    evidence: set[int] = set()  # versions whose latest finished whole-suite run is kept
    for pk, version_id, status, scenario_id, version_status in runs.iterator():
        seen[version_id] = seen.get(version_id, 0) + 1
        behind_publication = (
            version_status in PUBLISHED_STATUSES
            and status == SuiteRun.Status.FINISHED
            and scenario_id is None
            and version_id not in evidence
        )
        if behind_publication:
            evidence.add(version_id)
        if status in SuiteRun.ACTIVE or seen[version_id] <= keep or behind_publication:
            kept += 1
        else:
            prune.append(pk)
    return prune, kept


def runs_prune(*, keep: int | None = None, dry_run: bool = False) -> PruneReport:
    """Delete the runs the retention policy does not keep (see the module docstring), their
    results in batches, each run in its own transaction with its audit event; `dry_run`
    only counts."""
    keep = settings.RUN_RETENTION_PER_VERSION if keep is None else keep
    prune, kept = runs_to_prune(keep=keep)
    report = PruneReport(kept=kept)
    for pk in prune:
        results = ScenarioResult.objects.filter(run_id=pk)
        if dry_run:
            report.deleted.append(pk)
            report.results += results.count()
            continue
        with transaction.atomic():
            locked = SuiteRun.objects.select_for_update().select_related("version").filter(pk=pk)
            run = locked.exclude(status__in=SuiteRun.ACTIVE).first()
            if run is None:  # requeued or deleted meanwhile
                continue
            count = 0  # in batches: one statement over 100,000 rows holds too much at once
            while True:
                batch = list(results.values_list("pk", flat=True)[:DELETE_BATCH])
                if not batch:
                    break
                count += ScenarioResult.objects.filter(pk__in=batch).delete()[0]
            run.delete()
            audit_record(
                actor=None,
                action=Action.RUN_PRUNED,
                summary=f"Deleted run {pk} ({count} results) under the retention policy",
                version=run.version,
                changes={"run": pk, "results": count, "keep": keep},
            )
        report.deleted.append(pk)
        report.results += count
    return report
