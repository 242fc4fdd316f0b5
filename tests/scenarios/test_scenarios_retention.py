"""Retention: `prune_runs` keeps active runs, the last N runs of each version and the latest
finished run behind a published version, deletes the rest with their results, audits each,
and changes nothing in a dry run."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from contracts.models import AuditEvent, ContractVersion
from scenarios import services
from scenarios.models import ScenarioResult, SuiteRun

pytestmark = pytest.mark.django_db


def runs_of(version, owner, count):
    return [services.run_start(actor=owner, version=version) for _ in range(count)]


def test_prune_keeps_active_runs_the_last_per_version_and_the_one_behind_a_publication(
    owner, draft, scenario
):
    finished = runs_of(draft, owner, 4)
    ContractVersion.objects.filter(pk=draft.pk).update(status=ContractVersion.Status.PUBLISHED)
    active = SuiteRun.objects.create(
        decision_type=draft.decision_type,
        version=draft,
        total=1,
        created_by=owner,
        status=SuiteRun.Status.RUNNING,
    )
    results_before = ScenarioResult.objects.count()

    out = io.StringIO()
    call_command("prune_runs", "--keep", "1", "--dry-run", stdout=out)
    assert SuiteRun.objects.count() == 5 and ScenarioResult.objects.count() == results_before
    assert out.getvalue().startswith("Would delete 3 run(s)")
    assert not AuditEvent.objects.filter(action="run.pruned").exists()

    call_command("prune_runs", "--keep", "1", stdout=out)
    # Kept: the active run (the last one), and the latest finished run, the evidence
    # behind the published version.
    assert set(SuiteRun.objects.values_list("pk", flat=True)) == {active.pk, finished[-1].pk}
    deleted = {run.pk for run in finished[:-1]}
    assert not ScenarioResult.objects.filter(run_id__in=deleted).exists()
    assert ScenarioResult.objects.filter(run=finished[-1]).exists()
    events = AuditEvent.objects.filter(action="run.pruned")
    assert {e.changes["run"] for e in events} == deleted
    assert all(e.version_id == draft.pk for e in events)


def test_a_drafts_runs_keep_only_the_last_n(owner, draft, scenario):
    runs = runs_of(draft, owner, 4)
    services.runs_prune(keep=2)
    assert set(SuiteRun.objects.values_list("pk", flat=True)) == {runs[-1].pk, runs[-2].pk}


def test_the_latest_finished_run_of_a_published_version_survives_any_keep(owner, draft, scenario):
    runs = runs_of(draft, owner, 3)
    ContractVersion.objects.filter(pk=draft.pk).update(status=ContractVersion.Status.SUPERSEDED)
    report = services.runs_prune(keep=1)
    assert set(SuiteRun.objects.values_list("pk", flat=True)) == {runs[-1].pk}
    assert sorted(report.deleted) == sorted(r.pk for r in runs[:-1])
    assert report.results > 0


def test_prune_refuses_a_keep_below_one(db):
    with pytest.raises(CommandError, match="--keep must be at least 1, not 0"):
        call_command("prune_runs", "--keep", "0")
