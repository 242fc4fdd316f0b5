"""A published version never changes: the services refuse, and so does the model itself."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from contracts import services
from contracts.models import Bundle, ContractVersion, Proposition, VersionFrozen
from publishing import review

pytestmark = pytest.mark.django_db


@pytest.fixture
def version(published):
    return ContractVersion.objects.get(pk=published.version_id)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("purposes", ["something_else"]),
        ("min_relevance", 0.5),
        ("snapshot", {"tampered": True}),
        ("sha256", "0" * 64),
        ("lock_version", 999),
        ("number", 7),
    ],
)
def test_a_direct_save_of_a_published_version_is_refused(version, field, value):
    setattr(version, field, value)
    with pytest.raises(VersionFrozen):
        version.save()
    with pytest.raises(VersionFrozen):
        ContractVersion.objects.filter(pk=version.pk).update(**{field: value})
    version.refresh_from_db()
    assert getattr(version, field) != value


def test_a_published_version_cannot_go_back_to_draft(version):
    version.status = ContractVersion.Status.DRAFT
    with pytest.raises(VersionFrozen):
        version.save()
    with pytest.raises(VersionFrozen):
        ContractVersion.objects.filter(pk=version.pk).update(status="draft")


def test_only_its_status_moves_on(version):
    version.status = ContractVersion.Status.SUPERSEDED
    version.save()
    version.status = ContractVersion.Status.RETIRED
    version.save(update_fields=["status"])
    version.refresh_from_db()
    assert version.status == "retired"


def test_its_propositions_cannot_be_saved_created_or_deleted(version):
    proposition = version.propositions.get(key="waiver_valid")
    proposition.accepted_classes = ["case_note"]
    with pytest.raises(VersionFrozen):
        proposition.save()
    with pytest.raises(VersionFrozen):
        proposition.delete()
    with pytest.raises(VersionFrozen):
        Proposition.objects.create(version=version, key="smuggled")
    with pytest.raises(VersionFrozen):
        version.propositions.update(required=False)
    with pytest.raises(VersionFrozen):
        version.propositions.all().delete()
    with pytest.raises(VersionFrozen):
        version.delete()
    assert list(version.propositions.get(key="waiver_valid").accepted_classes) == [
        "approved_waiver",
        "committee_record",
    ]


def test_services_refuse_with_a_readable_message(version, owner):
    proposition = version.propositions.get(key="waiver_valid")
    with pytest.raises(ValidationError) as raised:
        services.accepted_class_remove(
            actor=owner,
            proposition=proposition,
            expected_lock_version=version.lock_version,
            class_key="committee_record",
        )
    assert raised.value.messages == [
        services.NOT_EDITABLE.format(number=version.number, status="published")
    ]
    with pytest.raises(ValidationError):
        review.version_submit(
            actor=owner, version=version, expected_lock_version=version.lock_version
        )


def test_a_bundle_row_is_immutable(published):
    published.content = b"{}"
    with pytest.raises(TypeError):
        published.save()
    with pytest.raises(TypeError):
        published.delete()
    with pytest.raises(TypeError):
        Bundle.objects.filter(pk=published.pk).update(content=b"{}")
    with pytest.raises(TypeError):
        Bundle.objects.all().delete()
