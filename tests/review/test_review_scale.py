"""Scale: the impact report and a bundle over a 200-scenario suite."""

from __future__ import annotations

import datetime as dt
import json
import time

import pytest

from contracts import selectors, services
from publishing import review
from scenarios import services as scenario_services
from scenarios.models import Scenario

pytestmark = pytest.mark.django_db

PROPOSITIONS = [f"fact_{i:02d}" for i in range(10)]
SCENARIOS = 200


@pytest.fixture
def wide(owner, reviewer, catalogue, devices):
    from contracts import roles

    decision_type = services.decision_type_create(
        actor=owner, key="wide.check", title="Ten facts", purposes=["check"]
    )
    services.access_grant(
        actor=owner, decision_type=decision_type, user=reviewer, role=roles.Role.REVIEWER
    )
    version = selectors.current_version(decision_type=decision_type)
    for key in PROPOSITIONS:
        services.proposition_add(
            actor=owner,
            version=version,
            expected_lock_version=version.lock_version,
            key=key,
            accepted_classes=["facility_record"],
        )
        version.refresh_from_db()
    candidates = [
        {
            "id": f"{kind}-{key}",
            "entity": "E1",
            "allowed_roles": ["analyst"],
            "allowed_purposes": ["check"],
            "evidence_class": kind,
            "supports": [key],
            "valid_from": "2026-01-01",
            "tokens": 10,
            "relevance": 0.5 if kind == "facility_record" else 0.9,
            "content": f"{kind} for {key}.",
        }
        for kind, keys in (("facility_record", PROPOSITIONS[:3]), ("case_note", PROPOSITIONS[3:6]))
        for key in keys
    ]
    corpus = scenario_services.corpus_import(
        actor=owner, decision_type=decision_type, name="wide", document={"candidates": candidates}
    )
    Scenario.objects.bulk_create(
        Scenario(
            decision_type=decision_type,
            corpus=corpus,
            name=f"scenario {i:03d}",
            position=i,
            principal="ana",
            roles=["analyst"],
            purpose="check",
            entity="E1",
            decision_date=dt.date(2026, 6, 1) + dt.timedelta(days=i % 30),
            token_budget=500 + i,  # every scenario a distinct compile input
            expected_slots={"fact_00": "supported", "fact_04": "unknown"},
            created_by=owner,
        )
        for i in range(SCENARIOS)
    )
    for person in (owner, reviewer):
        devices.ensure(person)
    return decision_type, version


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
