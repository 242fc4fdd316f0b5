"""The impact report evaluates a scenario's per-perturbation expectations with the same
function the runner and the flip matrix use, and shows a failure like any other."""

from __future__ import annotations

import datetime as dt

import pytest

from contracts import selectors, services
from publishing import review
from scenarios import services as scenario_services
from scenarios.models import Scenario

pytestmark = pytest.mark.django_db


@pytest.fixture
def lab(owner, catalogue):
    """A lab's sample release: one fact, established by a facility record."""
    decision_type = services.decision_type_create(
        actor=owner, key="lab.sample.release", title="Sample release", purposes=["release"]
    )
    version = selectors.current_version(decision_type=decision_type)
    services.proposition_add(
        actor=owner, version=version, expected_lock_version=version.lock_version,
        key="sample_signed", accepted_classes=["facility_record"],
    )  # fmt: skip
    version.refresh_from_db()
    corpus = scenario_services.corpus_import(
        actor=owner, decision_type=decision_type, name="bench",
        document={"candidates": [{
            "id": "rec-1", "entity": "S1", "allowed_roles": ["technician"],
            "allowed_purposes": ["release"], "evidence_class": "facility_record",
            "supports": ["sample_signed"], "valid_from": "2026-01-01", "tokens": 10,
            "relevance": 0.8, "content": "Sample S1 signed off.",
        }]},
    )  # fmt: skip
    scenario = Scenario.objects.create(
        decision_type=decision_type, corpus=corpus, name="Sample S1 released", position=0,
        principal="tam", roles=["technician"], purpose="release", entity="S1",
        decision_date=dt.date(2026, 6, 1), token_budget=500,
        expected_slots={"sample_signed": "supported"}, created_by=owner,
    )  # fmt: skip
    return version, scenario


def _expect(scenario, state):
    scenario.variant_expectations = [
        {"operator": "shift_days", "args": {"days": 1}, "proposition": "sample_signed",
         "state": state}
    ]  # fmt: skip
    scenario.save()


def test_a_failed_per_perturbation_expectation_is_in_the_report(lab):
    version, scenario = lab
    _expect(scenario, "contradicted")
    (entry,) = review.report_for(version).scenarios
    failure = next(f for f in entry["newly_failing"] if f.get("perturbation"))
    assert (failure["key"], failure["expected"], failure["actual"]) == (
        "sample_signed", "contradicted", "supported",
    )  # fmt: skip
    assert failure["perturbation"] == "shift_days(+1)"
    assert failure["text"].startswith(
        "'Sample S1 released' no longer meets its expectation for 'sample_signed' under "
        "'shift_days(+1)': expected contradicted"
    )
    assert entry["changed"]


def test_a_per_perturbation_expectation_that_holds_is_not_reported(lab):
    version, scenario = lab
    _expect(scenario, "supported")
    (entry,) = review.report_for(version).scenarios
    assert entry["newly_failing"] == []
