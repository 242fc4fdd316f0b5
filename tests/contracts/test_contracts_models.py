"""Constraints the database itself holds, whatever a service does."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from contracts.models import AuditEvent, ContractVersion, Proposition, SourceClass

pytestmark = pytest.mark.django_db


def test_version_numbers_are_unique_per_decision_type(draft, owner):
    draft.status = ContractVersion.Status.PUBLISHED
    draft.save()
    with pytest.raises(IntegrityError), transaction.atomic():
        ContractVersion.objects.create(
            decision_type=draft.decision_type, number=draft.number, created_by=owner
        )


def test_only_one_open_version_per_decision_type(draft, owner):
    with pytest.raises(IntegrityError), transaction.atomic():
        ContractVersion.objects.create(
            decision_type=draft.decision_type,
            number=draft.number + 1,
            status=ContractVersion.Status.IN_REVIEW,
            created_by=owner,
        )


def test_only_one_published_version_per_decision_type(draft, owner):
    draft.status = ContractVersion.Status.PUBLISHED
    draft.save()
    with pytest.raises(IntegrityError), transaction.atomic():
        ContractVersion.objects.create(
            decision_type=draft.decision_type,
            number=draft.number + 1,
            status=ContractVersion.Status.PUBLISHED,
            created_by=owner,
        )


def test_retired_and_superseded_versions_may_accumulate(draft, owner):
    draft.status = ContractVersion.Status.SUPERSEDED
    draft.save()
    for number in (2, 3):
        ContractVersion.objects.create(
            decision_type=draft.decision_type,
            number=number,
            status=ContractVersion.Status.RETIRED,
            created_by=owner,
        )
    assert draft.decision_type.versions.count() == 3


def test_proposition_keys_are_unique_within_a_version(draft):
    with pytest.raises(IntegrityError), transaction.atomic():
        Proposition.objects.create(version=draft, key="waiver_valid", position=9)


@pytest.mark.parametrize(
    ("status", "editable"),
    [
        ("draft", True),
        ("changes_requested", True),
        ("in_review", False),
        ("approved", False),
        ("published", False),
        ("superseded", False),
        ("retired", False),
    ],
)
def test_only_drafts_and_sent_back_versions_are_editable(status, editable):
    assert ContractVersion(status=status).is_editable is editable


def test_the_audit_log_is_append_only(draft):
    event = AuditEvent.objects.filter(version=draft).first()
    event.summary = "rewritten"
    with pytest.raises(TypeError):
        event.save()
    with pytest.raises(TypeError):
        event.delete()
    with pytest.raises(TypeError):
        AuditEvent.objects.filter(pk=event.pk).update(summary="rewritten")
    with pytest.raises(TypeError):
        AuditEvent.objects.filter(pk=event.pk).delete()
    event.refresh_from_db()
    assert event.summary != "rewritten"


def test_permitted_purposes_come_from_the_latest_version(atlas):
    assert atlas.permitted_purposes == ["annual_credit_review"]


def test_source_class_keys_are_validated():
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError) as raised:
        SourceClass(key="Not A Key", label="x").full_clean()
    assert "key" in raised.value.message_dict
