"""The demo workspace's scenarios tell the seeds' stories, and its first runs meet them."""

from __future__ import annotations

import io

import pytest

from scenarios import demo
from scenarios.models import Scenario, SuiteRun

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo_runs(demo_workspace):
    demo.load(io.StringIO())
    return {run.decision_type.key: run for run in SuiteRun.objects.select_related("decision_type")}


def test_every_demo_scenario_meets_its_expectations(demo_runs):
    assert set(demo_runs) == {demo.ATLAS_KEY, demo.REFUND_KEY}
    for run in demo_runs.values():
        assert run.status == "finished", run.error
        failing = {
            r.scenario_name: r.expectation_failures
            for r in run.results.filter(perturbation="")
            if r.expectation_failures
        }
        assert failing == {}
    assert Scenario.objects.count() == len(demo.SCENARIOS)


def test_loading_twice_changes_nothing(demo_runs):
    demo.load(io.StringIO())
    assert Scenario.objects.count() == len(demo.SCENARIOS)
    assert SuiteRun.objects.count() == 2


def by_name(run, scenario, perturbation=""):
    return run.results.get(scenario_name=scenario, perturbation=perturbation)


def test_the_stories(demo_runs):
    atlas = demo_runs[demo.ATLAS_KEY]
    seed = by_name(atlas, "Atlas: Maya's annual review").output
    rejected = {r["id"]: (r["reason"], r["detail"]) for r in seed["rejected"]}
    assert rejected["investigation-X9"] == ("not_authorised", "role")
    assert rejected["policy-P2"] == ("not_applicable", "superseded")
    assert rejected["waiver-W5"] == ("not_applicable", "expired")
    assert rejected["rm-note-N7"][0] == "wrong_evidence_class"

    moved = by_name(atlas, "Atlas: the addendum's last day", "shift_days(+1)")
    assert moved.flips["admitted_added"] == ["manual-G4"]
    assert moved.flips["admitted_removed"] == ["addendum-L1"]

    note = by_name(atlas, "Atlas: a case note worded as an approval").output
    assert ("rm-note-N9", "wrong_evidence_class") in {
        (r["id"], r["reason"]) for r in note["rejected"]
    }

    revoked = by_name(atlas, "Atlas: through a revoked delegation").output
    assert revoked["refusal"]["reason"] == "delegation_invalid"
    revoke = by_name(atlas, "Atlas: through the review assistant", "revoke_delegation")
    assert {f["variant"] for f in revoke.flips["slots"]} == {"refused"}

    disagreement = by_name(atlas, "Atlas: the committee contradicts the waiver").output
    waiver = next(s for s in disagreement["slots"] if s["proposition"] == "waiver_valid")
    assert waiver["state"] == "contradicted" and waiver["reason"] == "sources_disagree"
    assert set(waiver["resource_ids"]) == {"waiver-W6", "committee-C2"}

    refund = by_name(demo_runs[demo.REFUND_KEY], "Refund desk: order 481").output
    assert {r["id"]: r["reason"] for r in refund["rejected"]} == {
        "email-481": "wrong_evidence_class",
        "refund-policy-v2": "not_applicable",
    }


def test_a_refused_variant_and_an_invalid_free_suite_render(client, demo_runs):
    from django.contrib.auth import get_user_model
    from django.urls import reverse

    client.force_login(get_user_model().objects.get(username="olivia"))
    atlas = demo_runs[demo.ATLAS_KEY]
    revoke = by_name(atlas, "Atlas: through the review assistant", "revoke_delegation")
    kwargs = {"key": demo.ATLAS_KEY, "run_pk": atlas.pk, "pk": revoke.pk}
    diff = client.get(reverse("scenarios:result_diff", kwargs=kwargs)).content.decode()
    assert "delegation_invalid" in diff and "refused" in diff
    packet = client.get(reverse("scenarios:result_packet", kwargs=kwargs)).content.decode()
    assert "Refused in the <strong>resolve</strong> pass" in packet
    coverage = client.get(
        reverse("scenarios:run_coverage", kwargs={"key": demo.ATLAS_KEY, "pk": atlas.pk})
    ).content.decode()
    assert "contradicted" in coverage
