"""The impact report leads with its verdicts (violations one row per cause, widenings, new
findings); a cause of violations blocks submit and publish until an owner justifies it, once
for every scenario it touches; approving needs every widening acknowledged, and the approval
records what was acknowledged."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import reverse
from test_review_views import signed_form  # the review pages' helper

from compiler import PROBE_OPERATORS
from contracts.models import Approval, AuditEvent, ContractVersion, ViolationJustification
from publishing import demo as publishing_demo
from publishing import review
from scenarios import demo

pytestmark = pytest.mark.django_db


@pytest.fixture
def versions(demo_versions):
    by_number = {
        v.number: v for v in ContractVersion.objects.filter(decision_type__key=demo.ATLAS_KEY)
    }
    return by_number


def person(name):
    return get_user_model().objects.get(username=name)


def the_violation(report):
    return report.verdicts["violations"][0]


def justify(version, violation, text="Case notes are signed by the RM; accepted for Q3."):
    operator, proposition, cause = violation["key"]
    return review.violation_justify(
        actor=person("olivia"), version=version, operator=operator, proposition=proposition,
        cause=cause, text=text,
    )  # fmt: skip


def submit(version):
    version.refresh_from_db()
    return review.version_submit(
        actor=person("olivia"), version=version, expected_lock_version=version.lock_version
    )


def test_version_1_has_no_violation(versions):
    assert review.report_for(versions[1]).verdicts["violations"] == []


def test_version_2_report_leads_with_one_cause_the_weak_promotion_on_waiver_valid(versions):
    report = review.report_for(versions[2])
    (cause,) = report.verdicts["violations"]
    assert cause["key"] == ["promote_weak", "waiver_valid", "case_note"]
    scenarios = {s["name"] for s in report.scenarios}
    occurrences = [v for s in report.scenarios for v in s["verdicts"] if v["kind"] == "violation"]
    # Every scenario's weak promotion, counted on the one row; none elsewhere.
    assert cause["count"] == len(occurrences) > 1
    assert set(cause["scenarios"]) == {o["scenario"] for o in cause["occurrences"]} <= scenarios
    assert len(cause["scenarios"]) == len(set(cause["scenarios"])) > 1
    assert all("waiver_valid accepts a weak class" in o["message"] for o in cause["occurrences"])
    assert cause["justification"] is None and cause["new"]
    assert report.headline[0].startswith(
        f"1 cause(s) of violations ({cause['count']} violation(s))"
    )
    assert "promote_weak on 'waiver_valid', case_note" in report.headline[0]
    assert "waiver_valid accepts a weak class" in report.headline[0]
    # The contract itself widens (it accepts case notes), and so what it admits: the case
    # note is admitted where version 1 did not admit it. The contract's widenings come first.
    assert report.widenings[0] == {
        "id": "class_added:waiver_valid:case_note", "source": "contract", "kind": "class_added",
        "proposition": "waiver_valid",
        "text": "'waiver_valid' may now be established by 'case_note', which the baseline did "
        "not accept for it (choice 2 of 2).",
    }  # fmt: skip
    assert [w["source"] for w in report.widenings[1:]] == ["items"] * (len(report.widenings) - 1)
    assert "rm-note-N7" in report.widening_ids
    # The contract probes' made-up items are not among them: what those probes reveal is the
    # contract's widening above.
    places = [p["perturbation"] for w in report.widenings[1:] for p in w["where"]]
    assert places and not [p for p in places if p.split("(")[0] in PROBE_OPERATORS]
    assert "1 change(s) to the contract and" in report.headline[1]
    row = next(r for r in report.propositions if r["proposition"] == "waiver_valid")
    assert row["violations"] == cause["count"] == report.summary["violations"]
    assert report.summary["violation_causes"] == 1


def test_the_report_hash_covers_verdicts_and_justifications(versions):
    before = review.report_for(versions[2])
    assert "verdicts" in before.document
    justify(versions[2], the_violation(before))
    after = review.report_for(versions[2])
    assert after.sha256 != before.sha256
    assert after.verdicts["violations"][0]["justification"]["author"] == "olivia"


def test_one_justification_of_the_cause_unblocks_submit(versions):
    draft = versions[2]
    with pytest.raises(ValidationError) as refused:
        submit(draft)
    (message,) = refused.value.messages
    cause = the_violation(review.report_for(draft))
    # The refusal names the cause once, with its count, not each repetition.
    assert "1 cause(s) of violations have no justification" in message
    assert message.count("promote_weak on 'waiver_valid'") == 1
    assert f"{cause['count']} violation(s) in {len(cause['scenarios'])} scenario(s)" in message
    assert "waiver_valid accepts a weak class" in message
    action = review.available_actions(person("olivia"), draft)[review.SUBMIT]
    assert action.blocked and action.reason == message
    justify(draft, cause)
    assert ViolationJustification.objects.filter(version=draft).count() == 1
    assert submit(draft).status == ContractVersion.Status.IN_REVIEW
    event = AuditEvent.objects.get(action="violation.justified")
    assert event.changes["cause"] == ["promote_weak", "waiver_valid", "case_note"]
    assert event.changes["count"] == cause["count"]


def test_only_an_owner_justifies_and_only_a_real_violation(versions):
    draft = versions[2]
    violation = the_violation(review.report_for(draft))
    with pytest.raises(PermissionDenied):
        review.violation_justify(
            actor=person("rafael"), version=draft, operator="promote_weak",
            proposition="waiver_valid", cause="case_note", text="fine",
        )  # fmt: skip
    for operator, cause in (("shift_days", "case_note"), ("promote_weak", "email")):
        with pytest.raises(ValidationError) as refused:
            review.violation_justify(
                actor=person("olivia"), version=draft, operator=operator,
                proposition="waiver_valid", cause=cause, text="fine",
            )  # fmt: skip
        assert "nothing to justify" in refused.value.messages[0]
        assert f"{operator}, waiver_valid, {cause}" in refused.value.messages[0]
    with pytest.raises(ValidationError):
        justify(draft, violation, text="   ")
    assert not ViolationJustification.objects.exists()


@pytest.fixture
def in_review(versions):
    draft = versions[2]
    justify(draft, the_violation(review.report_for(draft)))
    return submit(draft)


def test_approve_needs_every_widening_acknowledged_and_records_them(in_review):
    report = review.report_for(in_review)
    assert report.widenings
    with pytest.raises(ValidationError) as refused:
        publishing_demo.demo_key_files().approve(
            actor=person("rafael"), version=in_review, report_sha256=report.sha256,
            acknowledged_widenings=report.widening_ids[1:],
        )  # fmt: skip
    assert report.widening_ids[0] in refused.value.messages[0]
    assert "acknowledged" in refused.value.messages[0]
    assert not Approval.objects.filter(version=in_review).exists()
    approval = publishing_demo.demo_key_files().approve(
        actor=person("rafael"), version=in_review, report_sha256=report.sha256,
        acknowledged_widenings=report.widening_ids,
    )  # fmt: skip
    assert approval.acknowledged_widenings == report.widenings
    assert review.acknowledged_widenings(in_review, report) == report.widenings


def test_publish_is_refused_while_a_violation_has_no_justification(in_review):
    report = review.report_for(in_review)
    publishing_demo.demo_key_files().approve(
        actor=person("rafael"), version=in_review, report_sha256=report.sha256,
        acknowledged_widenings=report.widening_ids,
    )  # fmt: skip
    in_review.refresh_from_db()
    assert review.available_actions(person("olivia"), in_review)[review.PUBLISH].allowed
    ViolationJustification.objects.filter(version=in_review).delete()
    action = review.available_actions(person("olivia"), in_review)[review.PUBLISH]
    assert action.blocked and "cannot be published" in action.reason
    assert "waiver_valid accepts a weak class" in action.reason


def test_impact_page_shows_verdicts_before_the_scenarios(client, in_review):
    client.force_login(person("rafael"))
    url = reverse("version_impact", args=[demo.ATLAS_KEY, in_review.number])
    page = client.get(url).content.decode()
    assert (
        page.index('id="violations"')
        < page.index('id="widenings"')
        < page.index('id="per-proposition"')
        < page.index("<h3>Scenarios</h3>")
    )
    assert "Justified by <bdi>olivia</bdi>" in page
    assert 'name="acknowledged_widenings"' in page
    assert '<details class="scenario" data-scenario=' in page  # collapsed


def test_approve_view_refuses_without_the_acknowledgement(client, in_review):
    client.force_login(person("rafael"))
    report = review.report_for(in_review)
    url = reverse("version_approve", args=[demo.ATLAS_KEY, in_review.number])
    refused = client.post(url, {"report_sha256": report.sha256})
    assert refused.status_code == 422
    assert "needs each widening acknowledged" in refused.content.decode()
    page = client.get(reverse("version_review", args=[demo.ATLAS_KEY, in_review.number]))
    signed = signed_form(
        page.content.decode(), "approve", publishing_demo.demo_key_files(), person("rafael")
    )
    done = client.post(url, {**signed, "acknowledged_widenings": report.widening_ids})
    assert done.status_code == 302
    assert Approval.objects.get(version=in_review).acknowledged_widenings == report.widenings


def test_justify_view(client, versions):
    draft = versions[2]
    violation = the_violation(review.report_for(draft))
    url = reverse("version_justify", args=[demo.ATLAS_KEY, draft.number])
    data = {
        "operator": violation["operator"], "proposition": violation["proposition"],
        "cause": violation["cause"], "text": "Accepted <b>for now</b>.",
    }  # fmt: skip
    client.force_login(person("rafael"))
    assert client.post(url, data).status_code == 403
    client.force_login(person("olivia"))
    assert client.post(url, {**data, "text": ""}).status_code == 422
    assert client.post(url, data).status_code == 302
    page = client.get(reverse("version_impact", args=[demo.ATLAS_KEY, draft.number]))
    text = page.content.decode()
    assert "Accepted &lt;b&gt;for now&lt;/b&gt;." in text
    # One row for the cause, with its count and scenarios, however many scenarios it touches.
    assert text.count('<li class="verdict-violation"') == 1
    assert f'data-count="{violation["count"]}"' in text
    assert f"{violation['count']} violations in {len(violation['scenarios'])} scenarios" in text
    assert text.count('action="' + url + '"') == 1


def test_the_demo_version_2_approved_and_justified_does_not_ship_version_1s_expectations(
    in_review,
):
    """Version 2's violation is justified and approved, but seven scenarios still expect what
    version 1 gave (a case note never establishes the waiver): its bundle's own tests would
    fail, so publishing it is refused before olivia signs, naming each scenario."""
    report = review.report_for(in_review)
    keys = publishing_demo.demo_key_files()
    keys.approve(
        actor=person("rafael"), version=in_review, report_sha256=report.sha256,
        acknowledged_widenings=report.widening_ids,
    )  # fmt: skip
    in_review.refresh_from_db()
    with pytest.raises(ValidationError) as refused:
        keys.publish(actor=person("olivia"), version=in_review)
    (message,) = refused.value.messages
    assert message.startswith(
        "Version 2's bundle carries 7 scenarios whose expectations do not hold for it: "
    )
    assert (
        "'Atlas: Maya's annual review' (slot waiver_valid: expected unknown, got supported, "
        "admitted: admitted but not expected: rm-note-N7, rejected: expected but not "
        "rejected: rm-note-N7)" in message
    )
    assert "'Atlas: the same question from an unrelated employee'" not in message
    in_review.refresh_from_db()
    assert in_review.status == "approved"
