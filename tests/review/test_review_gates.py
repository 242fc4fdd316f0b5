"""What stands between a draft and a signed bundle: lint errors refuse submit, approve and
publish; warnings reach the reviewer; the status and buttons shown are the ones the actions
act on (`review.available_actions`); and an approval covers the catalogue entries the bundle
carries."""

from __future__ import annotations

import re

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils.html import escape
from test_review_views import buttons, signed_form, signed_in, url  # the review pages' helpers

from contracts import services
from contracts.models import Bundle, ContractVersion, SourceClass
from publishing import review

pytestmark = pytest.mark.django_db


def fresh(version):
    return ContractVersion.objects.select_related("decision_type").get(pk=version.pk)


def broken_draft(draft, owner):
    """The new user's contract: a proposition accepting nothing and no permitted purpose."""
    services.proposition_add(
        actor=owner, version=draft, expected_lock_version=fresh(draft).lock_version, key="orphan"
    )
    version = fresh(draft)
    services.version_update_settings(
        actor=owner,
        version=version,
        expected_lock_version=version.lock_version,
        purposes=[],
        policy_name=version.policy_name,
        policy_version=version.policy_version,
        min_relevance=version.min_relevance,
        role_order=version.role_order,
    )
    return fresh(draft)


# --------------------------------------------------------------------------- lint errors


def test_lint_errors_refuse_submit_naming_each_error(suite, draft, owner, keys):
    version = broken_draft(draft, owner)
    with pytest.raises(ValidationError) as raised:
        review.version_submit(
            actor=owner, version=version, expected_lock_version=version.lock_version
        )
    message = " ".join(raised.value.messages)
    assert "'orphan' accepts no source class, so it can never be supported." in message
    assert "No purpose is permitted, so the compiler refuses every request." in message
    assert fresh(version).status == "draft"
    # The page says so too, and offers no submit button.
    page = signed_in(owner).get(url(version, "version_review")).content.decode()
    assert "submit" not in buttons(page)
    assert "can never be supported" in page
    response = signed_in(owner).post(
        url(version, "version_submit"), {"lock_version": version.lock_version}
    )
    assert response.status_code == 422
    assert fresh(version).status == "draft"


def test_a_contract_with_no_proposition_cannot_be_submitted(catalogue, owner):
    decision_type = services.decision_type_create(
        actor=owner, key="empty.contract", title="Empty", purposes=["audit"]
    )
    version = decision_type.versions.get()
    with pytest.raises(ValidationError) as raised:
        review.version_submit(
            actor=owner, version=version, expected_lock_version=version.lock_version
        )
    assert "no proposition" in " ".join(raised.value.messages)
    assert fresh(version).status == "draft"


def test_lint_errors_arising_after_submission_refuse_approve_and_publish(
    submitted, owner, reviewer, devices
):
    report = review.report_for(submitted)
    # A class the contract accepts is retired after submission: no candidate can carry it.
    key = submitted.propositions.first().accepted_classes[0]
    SourceClass.objects.filter(key=key).update(retired=True)
    with pytest.raises(ValidationError) as raised:
        devices.approve(actor=reviewer, version=submitted, report_sha256=report.sha256)
    assert f"accepts '{key}', which is retired" in " ".join(raised.value.messages)
    page = signed_in(reviewer).get(url(submitted, "version_review")).content.decode()
    assert "approve" not in buttons(page)
    # Approved before the class was retired: publishing is refused all the same.
    SourceClass.objects.filter(key=key).update(retired=False)
    devices.approve(
        actor=reviewer, version=submitted, report_sha256=review.report_for(submitted).sha256
    )
    SourceClass.objects.filter(key=key).update(retired=True)
    with pytest.raises(ValidationError) as raised:
        devices.publish(actor=owner, version=fresh(submitted))
    assert "which is retired" in " ".join(raised.value.messages)
    assert not Bundle.objects.exists()
    assert fresh(submitted).status == "approved"


def test_lint_warnings_reach_the_reviewer(suite, draft, owner, reviewer, keys):
    # Accepting a weak class is a warning: submit goes through, the reviewer is told.
    proposition = draft.propositions.get(key="waiver_valid")
    services.accepted_class_add(
        actor=owner,
        proposition=proposition,
        expected_lock_version=fresh(draft).lock_version,
        class_key="case_note",
    )
    # The weak promotion it allows is a violation (docs/verdicts.md): submit needs each cause
    # justified; the lint warning itself does not block.
    for violation in review.report_for(fresh(draft)).verdicts["violations"]:
        operator, key, cause = violation["key"]
        review.violation_justify(
            actor=owner, version=fresh(draft), operator=operator, proposition=key, cause=cause,
            text="Accepted while the committee records are migrated.",
        )  # fmt: skip
    version = review.version_submit(
        actor=owner, version=fresh(draft), expected_lock_version=fresh(draft).lock_version
    )
    warning = escape("'waiver_valid' accepts the weak class 'case_note'")
    client = signed_in(reviewer)
    assert warning in client.get(url(version, "version_review")).content.decode()
    impact = client.get(url(version, "version_impact")).content.decode()
    assert warning in impact
    assert impact.index(warning) < impact.index('id="headline"')


def test_a_first_version_with_no_scenario_warns_the_reviewer(draft, owner, reviewer, keys):
    version = review.version_submit(
        actor=owner, version=draft, expected_lock_version=draft.lock_version
    )
    page = signed_in(reviewer).get(url(version, "version_review")).content.decode()
    assert review.NO_SCENARIO in page
    impact = signed_in(reviewer).get(url(version, "version_impact")).content.decode()
    assert review.NO_SCENARIO in impact


# --------------------------------------------------------------------------- status shown


def test_after_approval_the_owner_is_told_it_can_be_published(approved, owner):
    page = signed_in(owner).get(url(approved, "version_review")).content.decode()
    assert 'id="own-version-note"' not in page
    assert "someone else must approve it" not in page
    assert "— open" not in page
    assert "publish" in buttons(page)


def test_an_approval_voided_by_a_scenario_change_no_longer_reads_approved(approved, owner):
    from scenarios.models import Scenario

    scenario = Scenario.objects.filter(decision_type=approved.decision_type).first()
    slots = dict(scenario.expected_slots)
    slots[next(iter(slots))] = "contradicted" if "supported" in slots.values() else "supported"
    Scenario.objects.filter(pk=scenario.pk).update(expected_slots=slots)
    page = signed_in(owner).get(url(approved, "version_review")).content.decode()
    assert 'data-status="approved"' not in page
    assert review.APPROVAL_OUT_OF_DATE in page
    assert "publish" not in buttons(page)
    assert "changed after it was approved" in page
    versions = reverse("decision_type_versions", kwargs={"key": approved.decision_type.key})
    listed = signed_in(owner).get(versions).content.decode()
    assert 'data-status="approved"' not in listed
    assert review.APPROVAL_OUT_OF_DATE in listed


# --------------------------------------------------------------------------- one source of truth


def test_the_withdraw_button_and_the_action_agree(submitted, owner, reviewer):
    review.version_request_changes(actor=reviewer, version=submitted, comment="Say why.")
    version = fresh(submitted)
    actions = review.available_actions(owner, version)
    page = signed_in(owner).get(url(version, "version_review")).content.decode()
    assert ("withdraw" in buttons(page)) == actions["withdraw"].allowed
    if not actions["withdraw"].allowed:
        with pytest.raises(ValidationError):
            review.version_withdraw(actor=owner, version=version)


def test_every_button_shown_is_an_action_allowed(approved, owner, reviewer, viewer):
    for user in (owner, reviewer, viewer):
        page = signed_in(user).get(url(approved, "version_review")).content.decode()
        allowed = {
            name.replace("_", "-")
            for name, action in review.available_actions(user, fresh(approved)).items()
            if action.allowed
        }
        assert buttons(page) == allowed, user


# --------------------------------------------------------------------------- reviewer's controls


def test_the_reviewer_approves_from_the_review_page(submitted, reviewer, devices):
    client = signed_in(reviewer)
    page = client.get(url(submitted, "version_review")).content.decode()
    assert {"approve", "request-changes"} <= buttons(page)
    shown = re.search(r'name="report_sha256" value="([0-9a-f]{64})"', page).group(1)
    data = signed_form(page, "approve", devices, reviewer)
    assert data["report_sha256"] == shown
    response = client.post(url(submitted, "version_approve"), data)
    assert response.status_code == 302
    assert fresh(submitted).status == "approved"


def test_the_dashboard_lists_what_waits_for_my_review(submitted, owner, reviewer, devices):
    page = signed_in(reviewer).get(reverse("dashboard")).content.decode()
    assert 'id="waiting-for-review"' in page
    assert url(submitted, "version_review") in page
    # Not the author's, and gone once approved.
    owners_page = signed_in(owner).get(reverse("dashboard")).content.decode()
    assert 'id="waiting-for-review"' not in owners_page
    devices.approve(
        actor=reviewer, version=submitted, report_sha256=review.report_for(submitted).sha256
    )
    page = signed_in(reviewer).get(reverse("dashboard")).content.decode()
    assert url(submitted, "version_review") not in page


# --------------------------------------------------------------------------- the catalogue


def test_a_class_relabelled_after_approval_is_not_published_unreviewed(
    approved, owner, reviewer, devices
):
    key = approved.propositions.first().accepted_classes[0]
    SourceClass.objects.filter(key=key).update(label="Relabelled after approval")
    with pytest.raises(ValidationError) as raised:
        devices.publish(actor=owner, version=fresh(approved))
    assert raised.value.messages == [review.CATALOGUE_CHANGED_SINCE_APPROVAL.format(number=1)]
    assert not Bundle.objects.exists()
    page = signed_in(owner).get(url(approved, "version_review")).content.decode()
    assert "source-class catalogue changed" in page
    # Returned to draft, submitted and approved again, the new label is what is published.
    version = review.version_withdraw(actor=owner, version=fresh(approved))
    version = review.version_submit(
        actor=owner, version=version, expected_lock_version=fresh(version).lock_version
    )
    devices.approve(
        actor=reviewer, version=version, report_sha256=review.report_for(version).sha256
    )
    bundle = devices.publish(actor=owner, version=fresh(version))
    labels = {c["key"]: c["label"] for c in bundle.document["source_classes"]}
    assert labels[key] == "Relabelled after approval"


def test_a_lost_race_answers_409_not_500(approved, owner, monkeypatch, devices):
    from django.db import IntegrityError

    from workbench.views import review as review_views

    def lose(**kwargs):
        raise IntegrityError("duplicate key value violates unique constraint")

    client = signed_in(owner)
    page = client.get(url(approved, "version_review")).content.decode()
    data = signed_form(page, "publish", devices, owner)
    monkeypatch.setattr(review, "version_publish", lose)
    response = client.post(url(approved, "version_publish"), data)
    assert response.status_code == 409
    assert escape(review_views.LOST_RACE) in response.content.decode()
