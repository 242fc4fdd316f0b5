"""The streamed report (`run_report_stream`), whose failures and flips the database writes
from the stored JSON, is the report `run_report` builds in Python: for names that JSON must
escape, and for a run with nothing to list."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from scenarios import selectors, services
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
    # Several flips of one variant keep their order (the database orders by row alone).
    assert any(len(r.flips["slots"]) > 2 for r in run.results.exclude(perturbation=""))


def test_a_run_with_no_failure_and_no_flip_is_valid_json(client, owner, draft, scenario):
    run = services.run_start(actor=owner, version=draft)
    run.results.update(flips=None, expectation_failures=[])
    report = streamed(client, owner, run)
    assert report == selectors.run_report(run=run)
    assert report["failures"] == [] and report["flips"] == []
