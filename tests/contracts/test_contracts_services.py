"""Every write: permission, the change itself, the lock counter and the audit event."""

from __future__ import annotations

import io

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from contracts import demo, services
from contracts.models import AuditEvent, ContractVersion, DecisionType, SourceClass

pytestmark = pytest.mark.django_db


def keys(version):
    return list(version.propositions.values_list("key", flat=True))


def classes(version, key):
    return version.propositions.get(key=key).accepted_classes


def last_event(version):
    return AuditEvent.objects.filter(version=version).order_by("-id").first()


# Source classes and catalogue proposals: tests/contracts/test_contracts_catalogue.py.


# --------------------------------------------------------------------------- decision types


def test_creating_a_decision_type_starts_an_owned_empty_draft(owner):
    decision_type = services.decision_type_create(
        actor=owner, key="refund.eligibility", title="Refunds", purposes=["refund_request"]
    )
    version = decision_type.versions.get()
    assert (version.number, version.status, version.purposes) == (1, "draft", ["refund_request"])
    assert owner.has_perm("contracts.change_decisiontype", decision_type)
    assert version.sha256 and version.snapshot["propositions"] == []
    assert list(
        AuditEvent.objects.filter(decision_type=decision_type).values_list("action", flat=True)
    ) == ["version.created", "decision_type.created"]


@pytest.mark.parametrize("person", ["viewer", "reviewer", "stranger"])
def test_only_policy_owners_create_decision_types(person, request, db):
    with pytest.raises(PermissionDenied):
        services.decision_type_create(actor=request.getfixturevalue(person), key="x.y", title="X")
    assert not DecisionType.objects.exists()


def test_a_taken_key_is_named_only_to_whom_may_see_its_type(owner, other_owner):
    """A pharmacy's dispensing-override type, owned by otto. Olivia, with no role on it, is
    told only that the key cannot be used (the message any unavailable key gets); once she may
    see the type, and for otto, the refusal says the type is there."""
    pharmacy = services.decision_type_create(
        actor=other_owner, key="dispensing.override", title="Pharmacy: override a dispensing hold"
    )
    with pytest.raises(ValidationError) as refused:
        services.decision_type_create(actor=owner, key="dispensing.override", title="Mine")
    assert refused.value.message_dict == {"key": [services.KEY_UNAVAILABLE]}
    assert "exist" not in services.KEY_UNAVAILABLE

    with pytest.raises(ValidationError) as refused:
        services.decision_type_create(actor=other_owner, key="dispensing.override", title="Again")
    assert refused.value.message_dict == {"key": [services.DUPLICATE_DECISION_TYPE]}

    services.access_grant(actor=other_owner, decision_type=pharmacy, user=owner, role="viewer")
    with pytest.raises(ValidationError) as refused:
        services.decision_type_create(actor=owner, key="dispensing.override", title="Mine")
    assert refused.value.message_dict == {"key": [services.DUPLICATE_DECISION_TYPE]}
    assert DecisionType.objects.filter(key="dispensing.override").count() == 1


def test_granting_a_role_needs_ownership(atlas, other_owner, stranger):
    with pytest.raises(PermissionDenied):
        services.access_grant(actor=other_owner, decision_type=atlas, user=stranger, role="viewer")


# --------------------------------------------------------------------------- propositions


def test_adding_a_proposition_moves_the_lock_and_is_audited(draft, owner):
    before = draft.lock_version
    services.proposition_add(
        actor=owner,
        version=draft,
        expected_lock_version=before,
        key="hard_stop",
        accepted_classes=["committee_record"],
        required=False,
        max_items=2,
    )
    draft.refresh_from_db()
    assert keys(draft)[-1] == "hard_stop"
    assert draft.lock_version == before + 1
    assert draft.snapshot["propositions"][-1]["max_items"] == 2
    assert last_event(draft).action == "proposition.added"


def test_a_stale_edit_raises_a_conflict_and_changes_nothing(draft, owner):
    stale = draft.lock_version
    services.proposition_add(actor=owner, version=draft, expected_lock_version=stale, key="a")
    draft.refresh_from_db()
    events = AuditEvent.objects.count()
    waiver = draft.propositions.get(key="waiver_valid")
    with pytest.raises(services.EditConflict) as raised:
        services.proposition_update(
            actor=owner,
            proposition=waiver,
            expected_lock_version=stale,
            key="renamed",
            description="",
            required=False,
            max_items=1,
        )
    assert raised.value.message == services.STALE_EDIT
    assert "waiver_valid" in keys(draft)
    assert AuditEvent.objects.count() == events
    assert ContractVersion.objects.get(pk=draft.pk).lock_version == draft.lock_version


@pytest.mark.parametrize("person", ["viewer", "reviewer", "other_owner", "stranger"])
def test_only_the_types_owners_edit_its_draft(person, request, draft):
    with pytest.raises(PermissionDenied):
        services.proposition_add(
            actor=request.getfixturevalue(person),
            version=draft,
            expected_lock_version=draft.lock_version,
            key="sneaky",
        )
    assert "sneaky" not in keys(draft)


def test_superusers_may_edit_any_draft(draft, superuser):
    services.proposition_add(
        actor=superuser, version=draft, expected_lock_version=draft.lock_version, key="extra"
    )
    assert "extra" in keys(draft)


def test_editing_a_version_in_review_returns_it_to_draft(draft, owner):
    # Issue 5 changed this: an owner may still edit a submitted version, which goes back to
    # draft (its approvals voided, tests/review covers those); before, the edit was refused.
    ContractVersion.objects.filter(pk=draft.pk).update(status="in_review")
    services.proposition_add(
        actor=owner, version=draft, expected_lock_version=draft.lock_version, key="late"
    )
    draft.refresh_from_db()
    assert draft.status == "draft"
    assert "late" in keys(draft)
    assert AuditEvent.objects.filter(version=draft, action="version.returned_to_draft").exists()


@pytest.mark.parametrize("status", ["published", "superseded", "retired"])
def test_a_frozen_version_cannot_be_edited(draft, owner, status):
    ContractVersion.objects.filter(pk=draft.pk).update(status=status)
    with pytest.raises(ValidationError) as raised:
        services.proposition_add(
            actor=owner, version=draft, expected_lock_version=draft.lock_version, key="late"
        )
    label = ContractVersion.Status(status).label.lower()
    message = services.NOT_EDITABLE.format(number=draft.number, status=label)
    assert raised.value.messages == [message]
    assert "late" not in keys(draft)


@pytest.mark.parametrize(
    ("arguments", "field", "message"),
    [
        ({"key": "waiver_valid"}, "key", services.DUPLICATE_PROPOSITION),
        ({"key": "Bad Key"}, "key", None),
        ({"key": "x", "accepted_classes": ["fax"]}, "accepted_classes", "'fax' is not in"),
        (
            {"key": "x", "accepted_classes": ["email", "email"]},
            "accepted_classes",
            "'email' is already accepted",
        ),
        ({"key": "x", "max_items": 0}, "max_items", None),
    ],
)
def test_invalid_propositions_are_refused_on_their_field(draft, owner, arguments, field, message):
    before = keys(draft)
    with pytest.raises(ValidationError) as raised:
        services.proposition_add(
            actor=owner, version=draft, expected_lock_version=draft.lock_version, **arguments
        )
    assert field in raised.value.message_dict
    if message:
        assert raised.value.message_dict[field][0].startswith(message)
    assert keys(draft) == before


def test_retired_classes_cannot_be_newly_accepted(draft, owner, catalogue):
    SourceClass.objects.filter(key="email").update(retired=True)
    with pytest.raises(ValidationError) as raised:
        services.accepted_class_add(
            actor=owner,
            proposition=draft.propositions.get(key="waiver_valid"),
            expected_lock_version=draft.lock_version,
            class_key="email",
        )
    assert raised.value.message_dict == {"class_key": [services.RETIRED_CLASS.format(key="email")]}


def test_update_renames_and_audits_before_and_after(draft, owner):
    services.proposition_update(
        actor=owner,
        proposition=draft.propositions.get(key="review_open"),
        expected_lock_version=draft.lock_version,
        key="review_status",
        description="Open or closed",
        required=False,
        max_items=3,
    )
    event = last_event(draft)
    assert event.changes["before"]["key"] == "review_open"
    assert event.changes["after"] == {
        "key": "review_status",
        "description": "Open or closed",
        "accepted_classes": ["workflow_event"],
        "required": False,
        "max_items": 3,
    }
    assert "review_status" in keys(draft)


def test_delete_renumbers_what_is_left(draft, owner):
    services.proposition_delete(
        actor=owner,
        proposition=draft.propositions.get(key="review_open"),
        expected_lock_version=draft.lock_version,
    )
    assert keys(draft) == ["facility_limit", "waiver_valid", "continuation_rule"]
    assert list(draft.propositions.values_list("position", flat=True)) == [0, 1, 2]


@pytest.mark.parametrize(
    ("key", "direction", "order"),
    [
        ("waiver_valid", "up", "facility_limit waiver_valid review_open continuation_rule"),
        ("waiver_valid", "down", "facility_limit review_open continuation_rule waiver_valid"),
        ("facility_limit", "up", "facility_limit review_open waiver_valid continuation_rule"),
    ],
)
def test_moving_propositions(draft, owner, key, direction, order):
    services.proposition_move(
        actor=owner,
        proposition=draft.propositions.get(key=key),
        expected_lock_version=draft.lock_version,
        direction=direction,
    )
    assert keys(draft) == order.split()
    draft.refresh_from_db()
    assert [p["key"] for p in draft.snapshot["propositions"]] == order.split()


# --------------------------------------------------------------------------- accepted classes


def test_accepted_classes_add_move_and_remove(draft, owner):
    def do(service, **arguments):
        draft.refresh_from_db()
        service(
            actor=owner,
            proposition=draft.propositions.get(key="waiver_valid"),
            expected_lock_version=draft.lock_version,
            **arguments,
        )
        return classes(draft, "waiver_valid")

    assert do(services.accepted_class_add, class_key="case_note") == [
        "approved_waiver",
        "committee_record",
        "case_note",
    ]
    assert do(services.accepted_class_move, class_key="committee_record", direction="up") == [
        "committee_record",
        "approved_waiver",
        "case_note",
    ]
    assert do(services.accepted_class_remove, class_key="case_note") == [
        "committee_record",
        "approved_waiver",
    ]
    event = last_event(draft)
    assert event.action == "accepted_class.removed"
    assert event.changes["before"] == ["committee_record", "approved_waiver", "case_note"]


def test_accepting_a_class_twice_is_refused(draft, owner):
    with pytest.raises(ValidationError) as raised:
        services.accepted_class_add(
            actor=owner,
            proposition=draft.propositions.get(key="waiver_valid"),
            expected_lock_version=draft.lock_version,
            class_key="approved_waiver",
        )
    assert raised.value.message_dict == {
        "class_key": [services.CLASS_ALREADY_ACCEPTED.format(key="approved_waiver")]
    }


# --------------------------------------------------------------------------- settings, drafts


def test_settings_change_purposes_and_policy(draft, owner):
    services.version_update_settings(
        actor=owner,
        version=draft,
        expected_lock_version=draft.lock_version,
        purposes=["annual_credit_review", "interim_review"],
        policy_name="strict",
        policy_version=2,
        min_relevance=0.25,
        role_order=["task", "instruction", "state", "evidence", "support", "tool"],
    )
    draft.refresh_from_db()
    assert draft.snapshot["purposes"] == ["annual_credit_review", "interim_review"]
    assert draft.snapshot["policy"]["name"] == "strict"
    assert draft.snapshot["policy"]["role_order"][0] == "task"
    assert last_event(draft).summary.startswith("Changed ")


def test_role_order_must_be_a_permutation(draft, owner):
    with pytest.raises(ValidationError) as raised:
        services.version_update_settings(
            actor=owner,
            version=draft,
            expected_lock_version=draft.lock_version,
            purposes=["annual_credit_review"],
            policy_name="default",
            policy_version=1,
            min_relevance=0.0,
            role_order=["task"],
        )
    assert "role_order" in raised.value.message_dict


def test_an_empty_purpose_list_is_saved_and_left_to_the_lint(draft, owner):
    services.version_update_settings(
        actor=owner,
        version=draft,
        expected_lock_version=draft.lock_version,
        purposes=[],
        policy_name="default",
        policy_version=1,
        min_relevance=0.0,
        role_order=list(draft.role_order),
    )
    draft.refresh_from_db()
    assert draft.purposes == []


def test_a_new_draft_copies_the_latest_version(draft, owner):
    with pytest.raises(ValidationError):
        services.version_start_draft(actor=owner, decision_type=draft.decision_type)
    ContractVersion.objects.filter(pk=draft.pk).update(status="published")
    new = services.version_start_draft(actor=owner, decision_type=draft.decision_type)
    assert (new.number, new.parent, new.status) == (2, draft, "draft")
    assert keys(new) == keys(draft)
    assert new.snapshot["version"] == "2"
    assert {**new.snapshot, "version": "1"} == draft.snapshot


# --------------------------------------------------------------------------- demo


def test_load_demo_is_idempotent(db):
    demo.load(io.StringIO())
    counts = (SourceClass.objects.count(), DecisionType.objects.count(), AuditEvent.objects.count())
    out = io.StringIO()
    demo.load(out)
    assert counts == (
        SourceClass.objects.count(),
        DecisionType.objects.count(),
        AuditEvent.objects.count(),
    )
    assert counts[:2] == (len(demo.SOURCE_CLASSES), 2)
    assert "olivia" in out.getvalue() and "olivia-local-demo" in out.getvalue()
    refund = ContractVersion.objects.get(decision_type__key="refund.eligibility")
    assert [(p["key"], p["accepted_classes"]) for p in refund.snapshot["propositions"]] == [
        ("delivery_date", ["order_record"]),
        ("refund_rule", ["policy_clause"]),
        ("exception_approved", ["approval_record"]),
    ]
    assert SourceClass.objects.get(key="customer_email").weak


# --------------------------------------------------------------------------- access


def test_a_new_role_replaces_the_old_one(atlas, owner, viewer):
    from contracts import roles

    services.access_grant(actor=owner, decision_type=atlas, user=viewer, role="owner")
    assert roles.role_of(viewer, atlas) == roles.Role.OWNER
    services.access_grant(actor=owner, decision_type=atlas, user=viewer, role="reviewer")
    assert roles.role_of(viewer, atlas) == roles.Role.REVIEWER
    assert not viewer.has_perm("contracts.change_decisiontype", atlas)
    event = AuditEvent.objects.filter(action="access.granted").order_by("-id").first()
    assert event.changes == {"user": "vera", "before": "owner", "role": "reviewer"}


def test_revoking_takes_every_permission(atlas, owner, reviewer):
    services.access_revoke(actor=owner, decision_type=atlas, user=reviewer)
    from contracts import selectors

    assert not selectors.decision_types_for_user(user=reviewer).exists()
    with pytest.raises(ValidationError):
        services.access_revoke(actor=owner, decision_type=atlas, user=reviewer)


def test_the_last_owner_stays(atlas, owner, viewer):
    with pytest.raises(ValidationError) as raised:
        services.access_grant(actor=owner, decision_type=atlas, user=owner, role="viewer")
    assert raised.value.message_dict == {"username": [services.LAST_OWNER]}
    services.access_grant(actor=owner, decision_type=atlas, user=viewer, role="owner")
    services.access_revoke(actor=owner, decision_type=atlas, user=owner)
    from contracts import roles

    assert [(u.username, r) for u, r in roles.people_with_roles(atlas)] == [
        ("vera", roles.Role.OWNER),
        ("rafael", roles.Role.REVIEWER),
    ]


def test_only_owners_manage_access(atlas, reviewer, viewer):
    with pytest.raises(PermissionDenied):
        services.access_grant(actor=reviewer, decision_type=atlas, user=viewer, role="owner")
    with pytest.raises(PermissionDenied):
        services.access_revoke(actor=reviewer, decision_type=atlas, user=viewer)


def test_a_policy_version_beyond_what_a_bundle_can_hash_is_refused_on_every_database(owner, draft):
    # SQLite stores 64-bit integers, but a bundle's RFC 8785 hash stops at 2**53 - 1: without
    # a bound of its own the edit was saved there and every later page of the draft failed.
    lock = draft.lock_version
    with pytest.raises(ValidationError) as caught:
        services.version_update_settings(
            actor=owner,
            version=draft,
            expected_lock_version=lock,
            purposes=["annual_credit_review"],
            policy_name="default",
            policy_version=2**60,
            min_relevance=0.0,
            role_order=["instruction", "task", "state", "evidence", "support", "tool"],
        )
    assert list(caught.value.message_dict) == ["policy_version"]
    draft.refresh_from_db()
    assert (draft.policy_version, draft.lock_version) == (1, lock)
    with pytest.raises(ValidationError) as caught:
        services.proposition_add(
            actor=owner, version=draft, expected_lock_version=lock, key="many", max_items=2**60
        )
    assert list(caught.value.message_dict) == ["max_items"]
