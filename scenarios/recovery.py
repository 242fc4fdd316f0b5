"""What this app asks of every worker (`workers.registry`, registered in `ScenariosConfig.ready`):
suite runs whose worker stopped are requeued (or failed after their last requeue),
suite-strength runs whose worker stopped are failed, and old runs are pruned on a schedule."""

from __future__ import annotations

import logging

from django.conf import settings

from . import services
from .models import SuiteRun

logger = logging.getLogger(__name__)


def recovered(run: SuiteRun) -> str:
    """What a stale run's recovery did: requeued (how many times) or failed (why)."""
    if run.status == run.Status.FAILED:
        return f"Run {run.pk}: failed: {run.error}"
    return (
        f"Run {run.pk}: requeued ({run.requeues} of {services.MAX_REQUEUES}) after "
        f"{run.resumed_from} of {run.total} scenarios"
    )


def recover_runs() -> list[str]:
    return [recovered(run) for run in services.runs_requeue_stale()]


def recover_strength_runs() -> list[str]:
    failed = services.mutation_runs_fail_stale()
    return [f"Suite strength {strength.pk}: failed: {strength.error}" for strength in failed]


def prune_runs() -> None:
    pruned = services.runs_prune()
    if pruned.deleted:
        logger.info("Pruned %s run(s) under the retention policy", len(pruned.deleted))


def prune_every_seconds() -> float:
    return float(getattr(settings, "RUN_PRUNE_EVERY_SECONDS", 86400))
