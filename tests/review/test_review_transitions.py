"""The review transitions and the four-eyes rule, through the actions views and commands call."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction

from contracts import services
from contracts.models import Approval, AuditEvent, Bundle, ContractVersion, Review
from publishing import review

pytestmark = pytest.mark.django_db

Status = ContractVersion.Status


def actions(version) -> list[str]:
    return list(
        AuditEvent.objects.filter(version=version).order_by("id").values_list("action", flat=True)
    )


def approve(version, reviewer, devices, **kwargs):
    version.refresh_from_db()
    report = review.report_for(version)
    return devices.approve(actor=reviewer, version=version, report_sha256=report.sha256, **kwargs)


# --------------------------------------------------------------------------- the happy path


def test_submit_freezes_the_contract_and_opens_one_review(submitted, owner):
    assert submitted.status == Status.IN_REVIEW
    (active,) = Review.objects.filter(version=submitted, closed_at__isnull=True)
    assert (active.submitted_by, active.contract_sha256) == (owner, submitted.sha256)
    assert active.version_lock == submitted.lock_version
    assert actions(submitted)[-1] == "version.submitted"
    # Frozen: the document is the snapshot, whatever the rows say.
    assert not submitted.is_editable


def test_submit_bumps_the_lock_so_old_editor_forms_cannot_pull_it_back(suite, draft, owner, keys):
    stale = draft.lock_version
    review.version_submit(actor=owner, version=draft, expected_lock_version=stale)
    with pytest.raises(services.EditConflict):
        services.proposition_add(actor=owner, version=draft, expected_lock_version=stale, key="x")
    draft.refresh_from_db()
    assert draft.status == Status.IN_REVIEW


def test_an_invalid_draft_cannot_be_submitted(suite, draft, owner, keys):
    draft.propositions.filter(key="review_open").update(accepted_classes=["x", "x"])
    with pytest.raises(ValidationError) as raised:
        review.version_submit(actor=owner, version=draft, expected_lock_version=draft.lock_version)
    assert "not a valid contract" in raised.value.messages[0]
    draft.refresh_from_db()
    assert draft.status == Status.DRAFT


def test_approval_records_the_version_and_report_it_saw(submitted, reviewer, devices):
    report = review.report_for(submitted)
    approval = devices.approve(
        actor=reviewer, version=submitted, report_sha256=report.sha256, comment="fine"
    )
    submitted.refresh_from_db()
    assert submitted.status == Status.APPROVED
    assert approval.report_sha256 == report.sha256
    assert approval.report == report.document
    assert (approval.contract_sha256, approval.version_lock) == (
        submitted.sha256,
        submitted.lock_version,
    )
    event = AuditEvent.objects.filter(version=submitted, action="version.approved").get()
    assert event.changes["report_sha256"] == report.sha256


def test_publish_supersedes_the_previous_version_and_chains_bundles(
    published, owner, reviewer, devices
):
    first = published.version
    assert first.status == Status.PUBLISHED
    assert published.parent is None
    second = services.version_start_draft(actor=owner, decision_type=first.decision_type)
    second = review.version_submit(
        actor=owner, version=second, expected_lock_version=second.lock_version
    )
    approve(second, reviewer, devices)
    bundle = devices.publish(actor=owner, version=second)
    first.refresh_from_db()
    assert (first.status, bundle.version.status) == (Status.SUPERSEDED, Status.PUBLISHED)
    assert bundle.parent == published
    assert bundle.document["manifest"]["parent_sha256"] == published.sha256
    assert Review.objects.get(version=second).outcome == "published"


def test_only_approved_versions_publish(submitted, owner, devices):
    with pytest.raises(ValidationError) as raised:
        devices.publish(actor=owner, version=submitted)
    assert raised.value.messages == [
        review.NOT_APPROVED.format(number=submitted.number, status="in review")
    ]
    assert not Bundle.objects.exists()


def test_reviewers_do_not_publish(approved, reviewer, devices):
    with pytest.raises(PermissionDenied):
        devices.publish(actor=reviewer, version=approved)


def test_request_changes_needs_a_comment_and_voids_approvals(approved, reviewer, owner):
    with pytest.raises(ValidationError):
        review.version_request_changes(actor=reviewer, version=approved, comment="  ")
    version = review.version_request_changes(
        actor=reviewer, version=approved, comment="Explain the committee record."
    )
    assert version.status == Status.CHANGES_REQUESTED
    assert not Approval.objects.standing().filter(version=version).exists()
    closed = Review.objects.get(version=version)
    assert (closed.outcome, closed.comment) == (
        "changes_requested",
        "Explain the committee record.",
    )
    # Sent back: the owner edits (it returns to draft) and submits again.
    services.proposition_add(
        actor=owner,
        version=version,
        expected_lock_version=version.lock_version,
        key="note",
        accepted_classes=["facility_record"],
    )
    version.refresh_from_db()
    assert version.status == Status.DRAFT
    review.version_submit(actor=owner, version=version, expected_lock_version=version.lock_version)
    assert Review.objects.filter(version=version).count() == 2


def test_owners_do_not_approve_or_request_changes(
    submitted, owner, viewer, devices, key_from_before
):
    devices.ensure(owner)
    key_from_before(viewer)
    for person in (owner, viewer):  # a key does not make anyone a reviewer
        with pytest.raises(PermissionDenied):
            review.version_request_changes(actor=person, version=submitted, comment="no")
        with pytest.raises(PermissionDenied):
            approve(submitted, person, devices)


def test_retire_a_published_version_and_abandon_a_draft(published, owner):
    version = published.version
    review.version_retire(actor=owner, version=version, reason="product withdrawn")
    version.refresh_from_db()
    assert version.status == Status.RETIRED
    draft = services.version_start_draft(actor=owner, decision_type=version.decision_type)
    review.version_retire(actor=owner, version=draft)
    draft.refresh_from_db()
    assert draft.status == Status.RETIRED
    # Nothing is open any more, so a new draft can start.
    assert (
        services.version_start_draft(actor=owner, decision_type=version.decision_type).number == 3
    )
    with pytest.raises(ValidationError):
        review.version_retire(actor=owner, version=version)


def test_withdraw_returns_to_draft(approved, owner):
    version = review.version_withdraw(
        actor=owner, version=approved, expected_lock_version=approved.lock_version
    )
    assert version.status == Status.DRAFT
    assert Review.objects.get(version=version).outcome == "returned_to_draft"
    assert not Approval.objects.standing().filter(version=version).exists()


def test_buttons_carry_the_lock_version(approved, owner, devices):
    with pytest.raises(services.EditConflict):
        devices.publish(
            actor=owner, version=approved, expected_lock_version=approved.lock_version - 1
        )


# --------------------------------------------------------------------------- four eyes


def test_the_owner_cannot_approve_their_own_version(submitted, owner, devices):
    # Even with the review permission: four eyes is about the person, not the role.
    from guardian.shortcuts import assign_perm

    assign_perm("review_decisiontype", owner, submitted.decision_type)
    owner = type(owner).objects.get(pk=owner.pk)
    with pytest.raises(PermissionDenied) as raised:
        approve(submitted, owner, devices)
    assert str(raised.value) == review.OWN_VERSION.format(number=submitted.number)
    assert not review.may_approve(owner, submitted)


def test_an_editor_cannot_approve(suite, draft, owner, make_user, keys, devices):
    from contracts import roles

    colleague = make_user("cora", roles.POLICY_OWNERS)
    devices.ensure(colleague)
    services.access_grant(
        actor=owner, decision_type=draft.decision_type, user=colleague, role=roles.Role.OWNER
    )
    draft.refresh_from_db()
    services.proposition_add(
        actor=colleague,
        version=draft,
        expected_lock_version=draft.lock_version,
        key="extra",
        accepted_classes=["facility_record"],
    )
    draft.refresh_from_db()
    review.version_submit(actor=owner, version=draft, expected_lock_version=draft.lock_version)
    # Now made a reviewer: having edited the version still disqualifies her.
    services.access_grant(
        actor=owner, decision_type=draft.decision_type, user=colleague, role=roles.Role.REVIEWER
    )
    colleague = type(colleague).objects.get(pk=colleague.pk)
    assert colleague.pk in review.authors(draft)
    with pytest.raises(PermissionDenied):
        approve(draft, colleague, devices)


def test_an_edit_after_approval_voids_it_and_returns_to_draft(approved, owner, reviewer, devices):
    proposition = approved.propositions.get(key="waiver_valid")
    services.accepted_class_move(
        actor=owner,
        proposition=proposition,
        expected_lock_version=approved.lock_version,
        class_key="committee_record",
        direction="up",
    )
    approved.refresh_from_db()
    assert approved.status == Status.DRAFT
    (approval,) = Approval.objects.filter(version=approved)
    assert approval.voided_at is not None and "edited" in approval.void_reason
    assert review.standing_approvals(approved) == []
    # Submitted again, the old approval does not count: publishing needs a new one.
    review.version_submit(
        actor=owner, version=approved, expected_lock_version=approved.lock_version
    )
    with pytest.raises(ValidationError):
        devices.publish(actor=owner, version=approved)
    approve(approved, reviewer, devices)
    assert devices.publish(actor=owner, version=approved).version == approved


def test_an_approval_whose_report_changed_is_refused(submitted, reviewer, owner, devices):
    from scenarios.models import Scenario

    seen = review.report_for(submitted).sha256
    scenario = Scenario.objects.filter(decision_type=submitted.decision_type).first()
    Scenario.objects.filter(pk=scenario.pk).update(expected_slots={"waiver_valid": "supported"})
    with pytest.raises(ValidationError) as raised:
        devices.approve(actor=reviewer, version=submitted, report_sha256=seen)
    assert raised.value.messages == [review.REPORT_CHANGED]
    assert not Approval.objects.exists()


def test_approving_twice_and_approving_without_a_key_are_refused(
    submitted, reviewer, make_user, owner, devices
):
    from contracts import roles

    approve(submitted, reviewer, devices)
    with pytest.raises(ValidationError):
        approve(submitted, reviewer, devices)
    keyless = make_user("kim", roles.RISK_REVIEWERS)
    services.access_grant(
        actor=owner, decision_type=submitted.decision_type, user=keyless, role=roles.Role.REVIEWER
    )
    keyless = type(keyless).objects.get(pk=keyless.pk)
    with pytest.raises(ValidationError) as raised:
        approve(submitted, keyless, devices)
    assert raised.value.messages == [review.NO_SIGNING_KEY.format(username="kim")]


def test_a_second_reviewer_adds_a_signature(approved, owner, make_user, devices):
    from contracts import roles

    second = make_user("rhea", roles.RISK_REVIEWERS)
    devices.ensure(second)
    services.access_grant(
        actor=owner, decision_type=approved.decision_type, user=second, role=roles.Role.REVIEWER
    )
    approve(approved, type(second).objects.get(pk=second.pk), devices)
    bundle = devices.publish(actor=owner, version=approved)
    signers = [(s["signer"], s["role"]) for s in bundle.document["signatures"]]
    assert signers == [("olivia", "publisher"), ("rafael", "approver"), ("rhea", "approver")]


def test_one_active_review_per_version_is_a_database_rule(submitted, owner):
    with pytest.raises(IntegrityError), transaction.atomic():
        Review.objects.create(
            version=submitted, submitted_by=owner, version_lock=0, contract_sha256="0" * 64
        )


def test_a_version_whose_scenarios_changed_after_approval_does_not_publish(
    approved, owner, reviewer, devices
):
    """The bundle carries the scenarios and their expectations, signed by the approver: the
    approver must have seen them. Editing an expectation after the approval changes the impact
    report the approval recorded, so publishing is refused until someone approves again."""
    from scenarios import services as scenario_services
    from scenarios.models import Scenario

    scenario = Scenario.objects.filter(decision_type=approved.decision_type).first()
    slot = next(iter(scenario.expected_slots))
    flipped = "supported" if scenario.expected_slots[slot] != "supported" else "unknown"
    scenario_services.scenario_update(
        actor=owner,
        scenario=scenario,
        corpus=scenario.corpus,
        expected_slots=scenario.expected_slots | {slot: flipped},
    )
    with pytest.raises(ValidationError) as caught:
        devices.publish(actor=owner, version=approved)
    assert caught.value.messages == [review.REPORT_CHANGED_SINCE_APPROVAL.format(number=1)]
    approved.refresh_from_db()
    assert approved.status == "approved" and not Bundle.objects.exists()
    # Return to draft, submit again, approve the current report: the approval counts again,
    # but the flipped expectation does not hold for version 1, so its bundle would ship a
    # failing test: still refused, naming the scenario and the expectation.
    approved = review.version_withdraw(
        actor=owner, version=approved, expected_lock_version=approved.lock_version
    )
    approved = review.version_submit(
        actor=owner, version=approved, expected_lock_version=approved.lock_version
    )
    report = review.report_for(approved)
    devices.approve(actor=reviewer, version=approved, report_sha256=report.sha256)
    approved.refresh_from_db()
    with pytest.raises(ValidationError) as caught:
        devices.publish(actor=owner, version=approved)
    (message,) = caught.value.messages
    assert message.startswith(
        f"Version 1's bundle carries 1 scenario whose expectations do not hold for it: "
        f"'{scenario.name}' (slot {slot}: expected {flipped}, got "
    )
    assert not Bundle.objects.exists()


def test_a_draft_started_after_an_abandoned_one_copies_the_published_contract(published, owner):
    """Abandoning a draft (retiring it) must not carry its changes into the next one."""
    version = published.version
    abandoned = services.version_start_draft(actor=owner, decision_type=version.decision_type)
    proposition = abandoned.propositions.get(key="waiver_valid")
    services.proposition_delete(
        actor=owner,
        proposition=proposition,
        expected_lock_version=abandoned.lock_version,
    )
    abandoned.refresh_from_db()
    review.version_retire(actor=owner, version=abandoned)
    fresh = services.version_start_draft(actor=owner, decision_type=version.decision_type)
    assert fresh.parent_id == version.pk
    assert "waiver_valid" in set(fresh.propositions.values_list("key", flat=True))
