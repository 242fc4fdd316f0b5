"""Whatever sequence of edits an owner makes, the rows, the snapshot and the log stay in step."""

from __future__ import annotations

import threading

import pytest
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contracts import services
from contracts.documents import compiler_json, document_sha256, draft_document, validate_document
from contracts.models import AuditEvent, ContractVersion

KEYS = ["facility_limit", "review_open", "waiver_valid", "continuation_rule", "hard_stop"]
CLASSES = ["approved_waiver", "committee_record", "case_note", "policy_clause", "fax"]

operation = st.tuples(
    st.sampled_from(["add", "delete", "move", "accept", "raise", "lower", "drop", "rename"]),
    st.sampled_from(KEYS),
    st.sampled_from(CLASSES),
)


def apply(owner, version, kind, key, class_key):
    proposition = version.propositions.filter(key=key).first()
    common = {"actor": owner, "expected_lock_version": version.lock_version}
    if kind == "add":
        return services.proposition_add(
            version=version, key=key, accepted_classes=[class_key], **common
        )
    if proposition is None:
        return None
    if kind == "delete":
        return services.proposition_delete(proposition=proposition, **common)
    if kind == "move":
        return services.proposition_move(proposition=proposition, direction="up", **common)
    if kind == "rename":
        return services.proposition_update(
            proposition=proposition,
            key=f"{key}_x",
            description="",
            required=True,
            max_items=1,
            **common,
        )
    service, extra = {
        "accept": (services.accepted_class_add, {}),
        "raise": (services.accepted_class_move, {"direction": "up"}),
        "lower": (services.accepted_class_move, {"direction": "down"}),
        "drop": (services.accepted_class_remove, {}),
    }[kind]
    return service(proposition=proposition, class_key=class_key, **extra, **common)


@pytest.mark.django_db
@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(operations=st.lists(operation, max_size=10))
def test_any_sequence_of_edits_keeps_rows_snapshot_and_log_in_step(draft, owner, operations):
    with transaction.atomic():
        version = ContractVersion.objects.get(pk=draft.pk)
        events, accepted = AuditEvent.objects.count(), 0
        for kind, key, class_key in operations:
            try:
                applied = apply(owner, version, kind, key, class_key)
            except ValidationError:
                applied = None
            version.refresh_from_db()
            accepted += applied is not None
        assert version.lock_version == draft.lock_version + accepted
        assert AuditEvent.objects.count() == events + accepted
        positions = list(version.propositions.values_list("position", flat=True))
        assert positions == list(range(len(positions)))
        expected = compiler_json(validate_document(draft_document(version)))
        assert version.snapshot == expected
        assert version.sha256 == document_sha256(expected)
        transaction.set_rollback(True)


@pytest.mark.django_db(transaction=True)
def test_two_people_saving_the_same_form_at_once_one_wins(atlas, owner):
    """The lock is taken in the database: racing edits from one stale form never both land."""
    version = atlas.versions.get()
    stale = version.lock_version
    proposition = version.propositions.get(key="review_open")
    start = threading.Barrier(2)
    outcomes: list[str] = []

    def save(description: str) -> None:
        start.wait()
        try:
            services.proposition_update(
                actor=owner,
                proposition=proposition,
                expected_lock_version=stale,
                key="review_open",
                description=description,
                required=True,
                max_items=1,
            )
            outcomes.append("saved")
        except services.EditConflict:
            outcomes.append("conflict")
        finally:
            connection.close()

    threads = [threading.Thread(target=save, args=(who,)) for who in ("first", "second")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["conflict", "saved"]
    version.refresh_from_db()
    assert version.lock_version == stale + 1
