"""The impact report and a bundle over a suite of distinct scenarios: each one compiled on both
sides and reported, the bundle without them and its test suite with all of them. How long it
takes at 2,000 and 10,000 scenarios is bench/impact_report.py's to measure."""

from __future__ import annotations

import json

import pytest

from contracts import services
from publishing import review

pytestmark = pytest.mark.django_db

PROPOSITIONS = [f"fact_{i:02d}" for i in range(10)]
SCENARIOS = 40


@pytest.fixture
def wide(wide_type):
    return wide_type(SCENARIOS)


def test_every_scenario_is_reported_and_travels_beside_the_bundle(wide, owner, reviewer, devices):
    decision_type, version = wide
    reviewer = type(reviewer).objects.get(pk=reviewer.pk)
    version = review.version_submit(
        actor=owner, version=version, expected_lock_version=version.lock_version
    )
    report = review.report_for(version)
    devices.approve(actor=reviewer, version=version, report_sha256=report.sha256)
    bundle = devices.publish(actor=owner, version=version)

    draft = services.version_start_draft(actor=owner, decision_type=decision_type)
    proposition = draft.propositions.get(key="fact_04")
    services.accepted_class_add(
        actor=owner,
        proposition=proposition,
        expected_lock_version=draft.lock_version,
        class_key="case_note",
    )
    draft.refresh_from_db()
    report = review.report_for(draft)

    assert report.summary["scenarios"] == SCENARIOS
    assert report.summary["newly_failing"] == SCENARIOS  # fact_04 was expected unknown
    assert report.summary["compiles"] > SCENARIOS * 2 * 5
    assert "scenarios" not in bundle.document
    assert len(json.loads(bundle.test_suite.data)["scenarios"]) == SCENARIOS
