"""The streamed report (`run_report_stream`) is the report `run_report` builds in Python,
whether a finished run's is put together from the pieces its commits kept, read back from
parts written whole, or written by the database from the stored JSON of the rows: for names
that JSON must escape, for a run with nothing to list, and for a run resumed part-way."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from scenarios import selectors, services, stored_reports
from scenarios.models import Scenario, SuiteRunReportPart

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
    assert stored_reports.has_pieces(run)  # kept as the run committed, and put together
    assert json.loads("".join(selectors.report_from_rows(run=run))) == report
    # Several flips of one variant keep their order (the database orders by row alone).
    assert any(len(r.flips["slots"]) > 2 for r in run.results.exclude(perturbation=""))


def test_a_run_with_no_failure_and_no_flip_is_valid_json(client, owner, draft, scenario):
    run = services.run_start(actor=owner, version=draft)
    run.results.update(flips=None, expectation_failures=[])
    run.report_pieces.all().delete()  # as if stored before: the report comes from the rows
    report = streamed(client, owner, run)
    assert report == selectors.run_report(run=run)
    assert report["failures"] == [] and report["flips"] == []
    # Pieces with nothing to list put together the same report.
    run.report_pieces.create(first=0, scenarios=run.total)
    assert stored_reports.has_pieces(run)
    assert streamed(client, owner, run) == report


def test_a_finished_run_keeps_its_report_in_pieces_and_reads_it_back_in_order(
    client, owner, draft, scenario, scenario_fields, settings
):
    settings.SUITE_RUN_HEARTBEAT_SECONDS = 0  # a commit, and a piece, after every scenario
    for day in (1, 2, 3):
        services.scenario_create(
            actor=owner,
            decision_type=scenario.decision_type,
            corpus=scenario.corpus,
            name=f"{scenario.name} on day {day}",
            **scenario_fields(
                decision_date=scenario.decision_date.replace(day=day),
                expected_slots={"facility_limit": "unknown"},
            ),
        )
    run = services.run_start(actor=owner, version=draft)
    pieces = list(run.report_pieces.order_by("first").values_list("first", "scenarios"))
    assert len(pieces) > 1 and sum(n for _, n in pieces) == run.total == 4
    assert [first for first, _ in pieces] == sorted(first for first, _ in pieces)
    from_rows = json.loads("".join(selectors.report_from_rows(run=run)))
    assert from_rows == selectors.run_report(run=run) == streamed(client, owner, run)
    assert from_rows["failures"] and from_rows["flips"]
    # Read back, not taken apart from the rows again.
    run.results.update(flips=None)
    assert streamed(client, owner, run) == from_rows


def test_a_report_the_pieces_do_not_cover_comes_from_the_rows(client, owner, draft, scenario):
    """A run resumed part-way after an upgrade kept pieces for only some of its scenarios."""
    Scenario.objects.filter(pk=scenario.pk).update(expected_slots={"facility_limit": "unknown"})
    run = services.run_start(actor=owner, version=draft)
    report = streamed(client, owner, run)
    run.report_pieces.update(scenarios=0)
    assert not stored_reports.has_pieces(run)
    run.report_pieces.update(failures="", flips="")  # were they read, the report would lose them
    assert streamed(client, owner, run) == report == selectors.run_report(run=run)


def test_a_report_written_whole_when_the_run_finished_is_read_back(client, owner, draft, scenario):
    """Runs finished before reports were kept in pieces kept theirs in parts."""
    run = services.run_start(actor=owner, version=draft)
    report = streamed(client, owner, run)
    run.report_pieces.all().delete()
    text = "".join(selectors.report_from_rows(run=run))
    for number, start in enumerate(range(0, len(text), 700)):
        SuiteRunReportPart.objects.create(run=run, number=number, text=text[start : start + 700])
    run.results.update(flips=None)  # read back, not taken apart from the rows
    assert streamed(client, owner, run) == report


def test_only_a_finished_run_has_its_report_put_together_from_pieces(owner, draft, scenario):
    run = services.run_start(actor=owner, version=draft)
    assert stored_reports.has_pieces(run)
    run.status = run.Status.RUNNING
    assert not stored_reports.has_pieces(run)
