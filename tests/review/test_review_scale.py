"""Scale: the impact report and a bundle over a 200-scenario suite."""

from __future__ import annotations

import json
import time

import pytest

from contracts import services
from publishing import review

pytestmark = pytest.mark.django_db

PROPOSITIONS = [f"fact_{i:02d}" for i in range(10)]
SCENARIOS = 200


@pytest.fixture
def wide(wide_type):
    return wide_type(SCENARIOS)


def test_a_200_scenario_impact_report_and_bundle(wide, owner, reviewer, record_property, devices):
    decision_type, version = wide
    reviewer = type(reviewer).objects.get(pk=reviewer.pk)
    version = review.version_submit(
        actor=owner, version=version, expected_lock_version=version.lock_version
    )
    started = time.perf_counter()
    report = review.report_for(version)
    first_report = time.perf_counter() - started
    started = time.perf_counter()
    devices.approve(actor=reviewer, version=version, report_sha256=report.sha256)
    approve = time.perf_counter() - started
    started = time.perf_counter()
    bundle = devices.publish(actor=owner, version=version)
    publish = time.perf_counter() - started

    draft = services.version_start_draft(actor=owner, decision_type=decision_type)
    proposition = draft.propositions.get(key="fact_04")
    services.accepted_class_add(
        actor=owner,
        proposition=proposition,
        expected_lock_version=draft.lock_version,
        class_key="case_note",
    )
    draft.refresh_from_db()
    started = time.perf_counter()
    report = review.report_for(draft)
    compared = time.perf_counter() - started

    assert report.summary["scenarios"] == SCENARIOS
    assert report.summary["newly_failing"] == SCENARIOS  # fact_04 was expected unknown
    assert report.summary["compiles"] > SCENARIOS * 2 * 5
    assert "scenarios" not in bundle.document
    assert len(json.loads(bundle.test_suite.data)["scenarios"]) == SCENARIOS
    timings = (
        ("report", first_report),
        ("approve", approve),
        ("publish", publish),
        ("diff", compared),
    )
    for name, seconds in timings:
        record_property(f"{name}_seconds", round(seconds, 2))
    print(
        f"\n200 scenarios: first report {first_report:.2f}s, approve (recomputes it, memoised) "
        f"{approve:.2f}s, publish {publish:.2f}s "
        f"({len(bundle.data)} bytes), report against the published version {compared:.2f}s "
        f"({report.summary['compiles']} compiles)"
    )
