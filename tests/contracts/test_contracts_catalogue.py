"""The shared source-class catalogue: who may change it, who may only propose, the audit trail
of every change, and the impact a change has on the decision types that accept the class."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.core.exceptions import PermissionDenied, ValidationError

from contracts import roles, selectors, services
from contracts.models import AuditEvent, SourceClass, SourceClassProposal

pytestmark = pytest.mark.django_db


def state(source_class: SourceClass, **changes) -> dict:
    """The class's editable fields, with some changed."""
    return source_class.field_values() | changes


def update(actor, source_class: SourceClass, **changes) -> SourceClass:
    source_class.refresh_from_db()
    return services.source_class_update(
        actor=actor,
        source_class=source_class,
        expected_lock_version=source_class.lock_version,
        **state(source_class, **changes),
    )


def propose(actor, source_class: SourceClass, reason: str = "", **changes) -> SourceClassProposal:
    return services.source_class_propose(
        actor=actor, source_class=source_class, reason=reason, **state(source_class, **changes)
    )


# --------------------------------------------------------------------------- the groups


def test_only_catalogue_managers_hold_the_catalogue_permission(owner, catalogue_manager):
    policy_owners = Group.objects.get(name=roles.POLICY_OWNERS)
    codenames = set(policy_owners.permissions.values_list("codename", flat=True))
    assert not codenames & {"add_sourceclass", "change_sourceclass", "manage_catalogue"}
    assert "add_sourceclassproposal" in codenames
    assert catalogue_manager.has_perm(roles.MANAGE_CATALOGUE)
    assert not owner.has_perm(roles.MANAGE_CATALOGUE)
    assert not catalogue_manager.has_perm(roles.PROPOSE_CATALOGUE_CHANGE)


# --------------------------------------------------------------------------- direct changes


def test_a_catalogue_manager_creates_a_class_with_an_audit_event(catalogue_manager):
    created = services.source_class_create(
        actor=catalogue_manager, key="signed_approval", label="Signed approval"
    )
    assert created.pk
    event = AuditEvent.objects.get(action="source_class.created")
    assert event.actor == catalogue_manager
    assert event.changes["key"] == "signed_approval"
    assert event.changes["before"] == {}
    assert event.changes["after"]["label"] == "Signed approval"


@pytest.mark.parametrize("person", ["owner", "viewer", "reviewer", "stranger"])
def test_nobody_but_a_catalogue_manager_changes_the_catalogue(person, request, catalogue):
    actor = request.getfixturevalue(person)
    with pytest.raises(PermissionDenied) as raised:
        services.source_class_create(actor=actor, key="fax", label="Fax")
    assert str(raised.value) == services.CATALOGUE_MANAGERS_ONLY
    with pytest.raises(PermissionDenied):
        update(actor, catalogue["investigation_note"], weak=True)
    with pytest.raises(PermissionDenied):
        update(actor, catalogue["investigation_note"], retired=True)
    note = SourceClass.objects.get(key="investigation_note")
    assert (note.weak, note.retired, note.lock_version) == (False, False, 0)
    assert not SourceClass.objects.filter(key="fax").exists()
    assert not AuditEvent.objects.filter(action="source_class.updated").exists()


def test_a_change_is_audited_with_the_before_and_after_of_the_changed_fields(
    catalogue, catalogue_manager
):
    update(catalogue_manager, catalogue["investigation_note"], weak=True, label="Investigation")
    event = AuditEvent.objects.get(action="source_class.updated")
    assert event.actor == catalogue_manager
    assert event.changes == {
        "key": "investigation_note",
        "before": {"label": "Investigation note", "weak": False},
        "after": {"label": "Investigation", "weak": True},
    }
    assert "label, weak" in event.summary


def test_retiring_is_audited_as_a_retirement(catalogue, catalogue_manager):
    update(catalogue_manager, catalogue["email"], retired=True)
    event = AuditEvent.objects.get(action="source_class.updated")
    assert event.summary.startswith("Retired source class 'email'")
    assert event.changes["before"] == {"retired": False}
    assert event.changes["after"] == {"retired": True}


def test_a_change_that_changes_nothing_is_refused(catalogue, catalogue_manager):
    with pytest.raises(ValidationError) as raised:
        update(catalogue_manager, catalogue["email"])
    assert raised.value.messages == [services.NO_CATALOGUE_CHANGE]
    assert SourceClass.objects.get(key="email").lock_version == 0


def test_source_class_keys_are_unique(catalogue, catalogue_manager):
    with pytest.raises(ValidationError) as raised:
        services.source_class_create(actor=catalogue_manager, key="case_note", label="Again")
    assert raised.value.message_dict == {"key": [services.DUPLICATE_SOURCE_CLASS]}


def test_stale_source_class_edit_changes_nothing(catalogue, catalogue_manager):
    email = catalogue["email"]
    arguments = {"description": "", "authority_tier": 4, "weak": True, "retired": False}
    services.source_class_update(
        actor=catalogue_manager,
        source_class=email,
        expected_lock_version=0,
        label="First",
        **arguments,
    )
    with pytest.raises(services.EditConflict) as raised:
        services.source_class_update(
            actor=catalogue_manager,
            source_class=email,
            expected_lock_version=0,
            label="Second",
            **arguments,
        )
    assert raised.value.message == services.STALE_SOURCE_CLASS
    email.refresh_from_db()
    assert (email.label, email.lock_version) == ("First", 1)


# --------------------------------------------------------------------------- proposals


def test_an_owner_proposes_and_the_catalogue_does_not_change(catalogue, owner):
    proposal = propose(owner, catalogue["case_note"], reason="Notes are reviewed now", weak=False)
    assert (proposal.status, proposal.proposed_by, proposal.key) == ("open", owner, "case_note")
    assert SourceClass.objects.get(key="case_note").weak is True
    event = AuditEvent.objects.get(action="source_class.proposed")
    assert event.changes["before"] == {"weak": True}
    assert event.changes["after"] == {"weak": False}
    assert event.changes["proposal"] == proposal.pk


@pytest.mark.parametrize("person", ["viewer", "reviewer", "stranger"])
def test_viewers_and_reviewers_cannot_propose(person, request, catalogue):
    with pytest.raises(PermissionDenied) as raised:
        propose(request.getfixturevalue(person), catalogue["case_note"], weak=False)
    assert str(raised.value) == services.PROPOSERS_ONLY
    assert not SourceClassProposal.objects.exists()


def test_a_proposal_that_changes_nothing_is_refused(catalogue, owner):
    with pytest.raises(ValidationError) as raised:
        propose(owner, catalogue["case_note"])
    assert raised.value.messages == [services.NO_CATALOGUE_CHANGE]


def test_a_proposed_new_class_must_have_a_new_key(catalogue, owner):
    with pytest.raises(ValidationError) as raised:
        services.source_class_propose(actor=owner, source_class=None, key="email", label="x")
    assert raised.value.message_dict == {"key": [services.DUPLICATE_SOURCE_CLASS]}


def test_accepting_applies_the_proposal_with_one_audit_event(catalogue, owner, catalogue_manager):
    proposal = propose(owner, catalogue["case_note"], weak=False)
    decided = services.source_class_proposal_accept(
        actor=catalogue_manager, proposal=proposal, expected_lock_version=0, note="Agreed"
    )
    assert (decided.status, decided.decided_by, decided.note) == (
        "accepted",
        catalogue_manager,
        "Agreed",
    )
    assert decided.decided_at is not None
    note = SourceClass.objects.get(key="case_note")
    assert (note.weak, note.lock_version) == (False, 1)
    event = AuditEvent.objects.get(action="source_class.proposal_accepted")
    assert event.actor == catalogue_manager
    assert event.changes == {
        "key": "case_note",
        "before": {"weak": True},
        "after": {"weak": False},
        "proposal": proposal.pk,
    }
    assert not AuditEvent.objects.filter(action="source_class.updated").exists()


def test_accepting_a_proposed_new_class_creates_it(catalogue, owner, catalogue_manager):
    proposal = services.source_class_propose(
        actor=owner,
        source_class=None,
        key="signed_approval",
        label="Signed approval",
        authority_tier=2,
    )
    services.source_class_proposal_accept(
        actor=catalogue_manager, proposal=proposal, expected_lock_version=None
    )
    created = SourceClass.objects.get(key="signed_approval")
    assert (created.label, created.authority_tier) == ("Signed approval", 2)
    event = AuditEvent.objects.get(action="source_class.proposal_accepted")
    assert event.changes["before"] == {} and event.changes["proposal"] == proposal.pk


def test_accepting_after_the_class_changed_saves_nothing(catalogue, owner, catalogue_manager):
    proposal = propose(owner, catalogue["case_note"], weak=False)
    update(catalogue_manager, catalogue["case_note"], label="Relationship note")
    with pytest.raises(services.EditConflict) as raised:
        services.source_class_proposal_accept(
            actor=catalogue_manager, proposal=proposal, expected_lock_version=0
        )
    assert raised.value.message == services.STALE_PROPOSAL
    proposal.refresh_from_db()
    assert proposal.status == "open"
    assert SourceClass.objects.get(key="case_note").weak is True


def test_accepting_sets_only_the_proposed_fields(catalogue, owner, catalogue_manager):
    proposal = propose(owner, catalogue["case_note"], weak=False)
    renamed = update(catalogue_manager, catalogue["case_note"], label="Relationship note")
    services.source_class_proposal_accept(
        actor=catalogue_manager, proposal=proposal, expected_lock_version=renamed.lock_version
    )
    note = SourceClass.objects.get(key="case_note")
    assert (note.label, note.weak) == ("Relationship note", False)


@pytest.mark.parametrize("person", ["owner", "viewer", "reviewer"])
def test_only_catalogue_managers_decide_proposals(person, request, catalogue, owner):
    proposal = propose(owner, catalogue["case_note"], weak=False)
    actor = request.getfixturevalue(person)
    with pytest.raises(PermissionDenied):
        services.source_class_proposal_accept(
            actor=actor, proposal=proposal, expected_lock_version=0
        )
    with pytest.raises(PermissionDenied):
        services.source_class_proposal_reject(actor=actor, proposal=proposal, note="No")
    proposal.refresh_from_db()
    assert proposal.status == "open"
    assert SourceClass.objects.get(key="case_note").weak is True


def test_rejecting_needs_a_reason_and_changes_nothing(catalogue, owner, catalogue_manager):
    proposal = propose(owner, catalogue["case_note"], weak=False)
    with pytest.raises(ValidationError) as raised:
        services.source_class_proposal_reject(actor=catalogue_manager, proposal=proposal, note=" ")
    assert raised.value.message_dict == {"note": [services.REJECTION_NEEDS_NOTE]}
    decided = services.source_class_proposal_reject(
        actor=catalogue_manager, proposal=proposal, note="Notes stay weak"
    )
    assert (decided.status, decided.note, decided.decided_by) == (
        "rejected",
        "Notes stay weak",
        catalogue_manager,
    )
    assert SourceClass.objects.get(key="case_note").weak is True
    event = AuditEvent.objects.get(action="source_class.proposal_rejected")
    assert event.changes["after"] == {"status": "rejected", "note": "Notes stay weak"}


def test_a_decided_proposal_cannot_be_decided_again(catalogue, owner, catalogue_manager):
    proposal = propose(owner, catalogue["case_note"], weak=False)
    services.source_class_proposal_reject(actor=catalogue_manager, proposal=proposal, note="No")
    with pytest.raises(ValidationError) as raised:
        services.source_class_proposal_accept(
            actor=catalogue_manager, proposal=proposal, expected_lock_version=0
        )
    assert raised.value.messages == [services.PROPOSAL_DECIDED.format(status="rejected")]
    assert SourceClass.objects.get(key="case_note").weak is True


def test_proposals_are_visible_to_their_proposer_and_to_managers(
    catalogue, owner, other_owner, catalogue_manager
):
    proposal = propose(owner, catalogue["case_note"], weak=False)
    assert selectors.proposal_for_user(user=owner, pk=proposal.pk) == proposal
    assert selectors.proposal_for_user(user=catalogue_manager, pk=proposal.pk) == proposal
    assert list(selectors.open_proposals()) == [proposal]
    assert list(selectors.proposals_by(user=other_owner)) == []
    with pytest.raises(SourceClassProposal.DoesNotExist):
        selectors.proposal_for_user(user=other_owner, pk=proposal.pk)


# --------------------------------------------------------------------------- impact


def accept_in(actor, decision_type, proposition_key, class_key):
    version = selectors.current_version(decision_type=decision_type)
    services.accepted_class_add(
        actor=actor,
        proposition=version.propositions.get(key=proposition_key),
        expected_lock_version=version.lock_version,
        class_key=class_key,
    )
    return version


def test_the_impact_names_the_versions_accepting_the_class_and_their_new_findings(
    catalogue, atlas, owner, superuser
):
    draft = accept_in(owner, atlas, "waiver_valid", "investigation_note")
    after = state(catalogue["investigation_note"], weak=True)
    impact = selectors.source_class_impact(user=superuser, key="investigation_note", after=after)
    assert impact.changes == {"weak": (False, True)}
    [affected] = impact.affected
    assert affected.version == draft and affected.propositions == ["waiver_valid"]
    assert [(f.code, f.proposition) for f in affected.added] == [
        ("weak_class_accepted", "waiver_valid")
    ]
    assert affected.removed == []
    assert impact.hidden_types == 0


def test_the_impact_of_retiring_adds_an_error_and_unmarking_weak_removes_a_warning(
    catalogue, atlas, owner, superuser
):
    accept_in(owner, atlas, "waiver_valid", "case_note")
    note = catalogue["case_note"]
    retired = selectors.source_class_impact(
        user=superuser, key="case_note", after=state(note, retired=True)
    )
    assert [f.code for f in retired.affected[0].added] == ["class_not_carriable"]
    strong = selectors.source_class_impact(
        user=superuser, key="case_note", after=state(note, weak=False)
    )
    assert [f.code for f in strong.affected[0].removed] == ["weak_class_accepted"]
    assert strong.affected[0].added == []


def test_the_impact_counts_types_the_person_cannot_see_without_naming_them(
    catalogue, atlas, refund, owner, other_owner, catalogue_manager, superuser
):
    accept_in(owner, atlas, "waiver_valid", "investigation_note")
    accept_in(other_owner, refund, "exception_approved", "investigation_note")
    after = state(catalogue["investigation_note"], weak=True)
    for_owner = selectors.source_class_impact(user=owner, key="investigation_note", after=after)
    assert [a.version.decision_type for a in for_owner.affected] == [atlas]
    assert for_owner.hidden_types == 1
    for_manager = selectors.source_class_impact(
        user=catalogue_manager, key="investigation_note", after=after
    )
    assert (for_manager.affected, for_manager.hidden_types) == ([], 2)
    for_superuser = selectors.source_class_impact(
        user=superuser, key="investigation_note", after=after
    )
    assert {a.version.decision_type.key for a in for_superuser.affected} == {
        atlas.key,
        refund.key,
    }


def test_a_class_nobody_accepts_affects_nobody(catalogue, atlas, superuser):
    impact = selectors.source_class_impact(
        user=superuser, key="email", after=state(catalogue["email"], weak=False)
    )
    assert (impact.affected, impact.hidden_types) == ([], 0)
