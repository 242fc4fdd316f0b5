"""The impact report is computed in the background and stored by the hash of its inputs: no
request compiles it, the pages say it is being computed, and approve refuses until it is
ready. The stored report is exactly the one computed in place (approvals record its hash)."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.test.utils import override_settings
from django.urls import reverse

from contracts.models import StoredImpactReport
from publishing import impact, review

pytestmark = pytest.mark.django_db

DATABASE_TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
HTMX = {"HX-Request": "true"}


def impact_url(version):
    return reverse(
        "version_impact", kwargs={"key": version.decision_type.key, "number": version.number}
    )


def no_compiles(monkeypatch):
    """Make any compile of the report in the calling code fail the test."""

    def refuse(*args):
        raise AssertionError("a request compiled the impact report")

    monkeypatch.setattr("publishing.impact.chunks.scenario_entries", refuse)


def drain_queue():
    call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload", verbosity=0)


@pytest.mark.django_db(transaction=True)
def test_submit_queues_the_report_and_the_pages_wait_for_it(
    client, suite, draft, owner, reviewer, keys, devices, monkeypatch
):
    from django_tasks_db.models import DBTaskResult

    draft.refresh_from_db()
    with override_settings(TASKS=DATABASE_TASKS):
        version = review.version_submit(
            actor=owner, version=draft, expected_lock_version=draft.lock_version
        )
        stored = StoredImpactReport.objects.get(version=version)
        assert stored.status == StoredImpactReport.Status.PENDING
        assert DBTaskResult.objects.get().task_path == (
            "publishing.impact.tasks.compute_impact_report"
        )

        with monkeypatch.context() as patch:
            no_compiles(patch)
            client.force_login(reviewer)
            page = client.get(impact_url(version))
            assert page.status_code == 200
            text = page.content.decode()
            assert review.REPORT_PENDING.format(number=version.number) in text
            assert 'hx-trigger="every 2s"' in text and "?poll=1" in text
            poll = client.get(impact_url(version) + "?poll=1", headers=HTMX)
            assert poll.status_code == 200 and "every 2s" in poll.content.decode()
            review_page = client.get(
                reverse(
                    "version_review",
                    kwargs={"key": version.decision_type.key, "number": version.number},
                )
            ).content.decode()
            assert 'id="report-pending"' in review_page and 'id="approve"' not in review_page
            with pytest.raises(ValidationError) as refused:
                review.version_approve(
                    actor=reviewer, version=version, report_sha256="0" * 64, signed_statement=None
                )
            assert refused.value.messages == [review.REPORT_PENDING.format(number=version.number)]
            assert StoredImpactReport.objects.count() == 1  # asked for once

        drain_queue()
        stored.refresh_from_db()
        assert stored.status == StoredImpactReport.Status.READY
        computed_now = impact.impact_report(version)
        assert stored.report_sha256 == computed_now.sha256

        with monkeypatch.context() as patch:
            no_compiles(patch)
            poll = client.get(impact_url(version) + "?poll=1", headers=HTMX)
            assert poll.status_code == 286  # htmx: stop polling, the report is here
            assert computed_now.sha256 in poll.content.decode()
            approval = devices.approve(
                actor=reviewer, version=version, report_sha256=computed_now.sha256
            )
    assert approval.report_sha256 == computed_now.sha256
    assert impact.report.sha256_hex(approval.report) == computed_now.sha256


@pytest.mark.django_db(transaction=True)
def test_a_changed_scenario_queues_a_new_report_and_the_old_one_no_longer_counts(
    submitted, reviewer, django_capture_on_commit_callbacks
):
    from scenarios.models import Scenario

    first = review.report_for(submitted)
    before = impact.inputs_sha256(submitted)
    scenario = Scenario.objects.filter(decision_type=submitted.decision_type).first()
    with override_settings(TASKS=DATABASE_TASKS):
        from django_tasks_db.models import DBTaskResult

        with django_capture_on_commit_callbacks(execute=True):
            scenario.expected_slots = {**scenario.expected_slots, "facility_active": "unknown"}
            scenario.save()
        assert impact.inputs_sha256(submitted) != before
        queued = DBTaskResult.objects.get()
        assert queued.args_kwargs == {"args": [submitted.pk], "kwargs": {}}
        assert review.report_for(submitted) is None  # the new inputs' report is not stored yet
        with pytest.raises(ValidationError):
            review.version_approve(
                actor=reviewer, version=submitted, report_sha256=first.sha256,
                signed_statement=None,
            )  # fmt: skip
        drain_queue()
    now = review.report_for(submitted)
    assert now is not None and now.sha256 != first.sha256
    assert now.sha256 == impact.impact_report(submitted).sha256


def test_the_same_inputs_give_the_same_stored_report(submitted):
    first = impact.stored_report(submitted)
    assert first.status == StoredImpactReport.Status.READY
    assert impact.stored_report(submitted).pk == first.pk
    assert StoredImpactReport.objects.filter(version=submitted).count() == 1


@pytest.mark.django_db(transaction=True)
def test_changes_in_one_transaction_queue_one_recomputation_and_a_rollback_queues_none(
    submitted,
):
    from django.db import transaction
    from django_tasks_db.models import DBTaskResult

    from scenarios.models import Scenario

    scenarios = list(Scenario.objects.filter(decision_type=submitted.decision_type)[:2])
    assert len(scenarios) == 2
    with override_settings(TASKS=DATABASE_TASKS):
        with transaction.atomic():
            for scenario in scenarios:
                scenario.save()
            scenarios[0].save()
            assert not DBTaskResult.objects.exists()  # nothing before the commit
        [queued] = DBTaskResult.objects.all()
        assert queued.args_kwargs == {"args": [submitted.pk], "kwargs": {}}

        DBTaskResult.objects.all().delete()
        with pytest.raises(RuntimeError), transaction.atomic():
            scenarios[1].save()
            raise RuntimeError("rolled back")
        assert not DBTaskResult.objects.exists()
        scenarios[0].save()  # the next commit sends the version once
        assert DBTaskResult.objects.count() == 1
