"""The streamed report (`run_report_stream`), whose failures and flips the database writes
from the stored JSON, is the report `run_report` builds in Python: for names that JSON must
escape, and for a run with nothing to list."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from scenarios import selectors, services, stored_reports
from scenarios.models import Scenario

pytestmark = pytest.mark.django_db

AWKWARD = 'Atlas "quoted" \\ back-slashed, café ✓ \u2028 <b>'


def streamed(client, owner, run):
    client.force_login(owner)
    key = run.decision_type.key
    response = client.get(reverse("scenarios:run_report", kwargs={"key": key, "pk": run.pk}))
    assert response.status_code == 200 and response.streaming
    return json.loads(b"".join(response.streaming_content))


def test_a_name_json_must_escape_is_reported_as_stored(client, owner, draft, scenario):
    Scenario.objects.filter(pk=scenario.pk).update(
        name=AWKWARD, expected_slots={"facility_limit": "unknown"}
    )
    run = services.run_start(actor=owner, version=draft)
    report = streamed(client, owner, run)
    assert report == selectors.run_report(run=run)
    assert report["failures"] and report["flips"]
    assert {item["scenario"] for item in report["failures"] + report["flips"]} == {AWKWARD}
    assert run.report_parts.exists()  # stored as the run finished, and read back
    assert json.loads("".join(selectors.report_from_rows(run=run))) == report
    # Several flips of one variant keep their order (the database orders by row alone).
    assert any(len(r.flips["slots"]) > 2 for r in run.results.exclude(perturbation=""))


def test_a_run_with_no_failure_and_no_flip_is_valid_json(client, owner, draft, scenario):
    run = services.run_start(actor=owner, version=draft)
    run.results.update(flips=None, expectation_failures=[])
    run.report_parts.all().delete()  # as if stored before: the report comes from the rows
    report = streamed(client, owner, run)
    assert report == selectors.run_report(run=run)
    assert report["failures"] == [] and report["flips"] == []
    stored_reports.store(run)
    assert streamed(client, owner, run) == report


def test_a_finished_run_keeps_its_report_and_reads_it_back_in_order(
    client, owner, draft, scenario, monkeypatch
):
    from scenarios.selectors import reports

    monkeypatch.setattr(stored_reports, "PART_CHARACTERS", 500)  # many small parts,
    monkeypatch.setattr(reports, "REPORT_BATCH", 3)  # of small pieces
    Scenario.objects.filter(pk=scenario.pk).update(expected_slots={"facility_limit": "unknown"})
    run = services.run_start(actor=owner, version=draft)
    parts = list(run.report_parts.values_list("text", flat=True))
    assert len(parts) > 3
    from_rows = "".join(selectors.report_from_rows(run=run))
    assert "".join(parts) == from_rows
    assert json.loads(from_rows) == selectors.run_report(run=run) == streamed(client, owner, run)
    # Read back, not taken apart from the rows again.
    run.results.update(flips=None)
    assert streamed(client, owner, run) == json.loads(from_rows)


def test_a_run_whose_report_could_not_be_stored_still_finishes_and_reports(
    client, owner, draft, scenario, monkeypatch, caplog
):
    def broken(run):
        raise RuntimeError("disk full")

    monkeypatch.setattr(stored_reports, "store", broken)
    run = services.run_start(actor=owner, version=draft)
    assert run.status == run.Status.FINISHED and not run.report_parts.exists()
    assert f"Run {run.pk} finished, but its report was not stored" in caplog.text
    assert streamed(client, owner, run) == selectors.run_report(run=run)


def test_only_a_finished_run_has_its_report_kept(owner, draft, scenario):
    run = services.run_start(actor=owner, version=draft)
    run.status = run.Status.RUNNING
    with pytest.raises(ValueError, match="only a finished run's report is kept"):
        stored_reports.store(run)
