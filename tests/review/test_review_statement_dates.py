"""The workbench refuses a signed statement dated before the signer's key was registered, or
in the future beyond the clock skew; a statement a little ahead of the workbench's clock is
accepted. The keys it exports say when each was registered, so `verify-bundle` can check the
same.

The domain: a harbour's berth allocation, approved by the harbour master's deputy (dora)."""

from __future__ import annotations

import datetime as dt

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from compiler_trust import MAX_CLOCK_SKEW, key_set_json, parse_key_set, sign_as


@pytest.fixture
def berths(make_user, catalogue_manager):
    from contracts import roles, selectors, services
    from contracts.models import SourceClass

    services.source_class_create(
        actor=catalogue_manager,
        key="port_authority_notice",
        label="Port authority notice",
        authority_tier=SourceClass.AuthorityTier.SYSTEM_OF_RECORD,
    )
    master = make_user("hamid", roles.POLICY_OWNERS)
    decision_type = services.decision_type_create(
        actor=master, key="harbour.berth_allocation", title="Berth allocation",
        purposes=("berth_planning",),
    )  # fmt: skip
    version = selectors.current_version(decision_type=decision_type)
    services.proposition_add(
        actor=master, version=version, expected_lock_version=version.lock_version,
        key="draught_fits", description="The vessel's draught fits the berth.",
        accepted_classes=("port_authority_notice",),
    )  # fmt: skip
    version.refresh_from_db()
    return version


@pytest.fixture
def dora(make_user):
    from contracts import roles

    return make_user("dora", roles.RISK_REVIEWERS)


@pytest.fixture
def dora_key(dora, tmp_path):
    from publishing.demo import KeyFiles

    files = KeyFiles(tmp_path / "keys")
    return files, files.ensure(dora)


def _approval(version, person, files, signed_at: dt.datetime):
    from publishing.review.statements import approval_statement

    statement = approval_statement(person, version, "ef" * 32)
    return sign_as(statement, files.private_key(person), signed_at=signed_at)


def _check(version, person, signed):
    from publishing.review.statements import checked_statement

    return checked_statement(
        person, version, signed, {"kind": "approval", "report_sha256": "ef" * 32}
    )


def test_a_statement_dated_before_the_key_was_registered_is_refused(berths, dora, dora_key):
    files, key = dora_key
    before = key.created_at - dt.timedelta(days=3)
    signed = _approval(berths, dora, files, before)
    with pytest.raises(ValidationError) as caught:
        _check(berths, dora, signed)
    message = caught.value.message_dict["signed_statement"][0]
    assert message.startswith("The signed statement is refused: the approval statement by 'dora'")
    assert f"before key {key.key_id} existed" in message
    assert before.astimezone(dt.UTC).replace(microsecond=0).isoformat() in message


def test_a_statement_dated_beyond_the_clock_skew_is_refused(berths, dora, dora_key):
    files, _ = dora_key
    ahead = timezone.now() + MAX_CLOCK_SKEW + dt.timedelta(minutes=2)
    with pytest.raises(ValidationError, match="in the future: later than now"):
        _check(berths, dora, _approval(berths, dora, files, ahead))


def test_a_statement_a_little_ahead_of_the_workbench_is_accepted(berths, dora, dora_key):
    files, _ = dora_key
    ahead = timezone.now() + dt.timedelta(minutes=1)
    signed = _check(berths, dora, _approval(berths, dora, files, ahead))
    assert signed.statement.signer == "dora"


def test_the_exported_key_set_says_when_each_key_was_registered(dora_key):
    from publishing import signing

    _, key = dora_key
    exported = parse_key_set(key_set_json(signing.key_set_entries()))
    registered = key.created_at.astimezone(dt.UTC).replace(microsecond=0).isoformat()
    assert exported[key.key_id].valid_from == registered
    assert signing.trusted_public_keys()[key.key_id].valid_from == registered


def test_importing_a_bundle_signed_before_its_keys_were_registered_is_refused(make_user):
    from compiler_trust import BundleInvalid, Problem, public_key_pem
    from contracts import roles
    from contracts.models import DecisionType, SigningKey
    from publishing import signing
    from publishing.review.importing import bundle_import
    from tests.compiler.pharmacy_bundle import INES, TOMAS, bundle

    registered = {}
    # A publisher who may create decision types here and a site-wide reviewer: who may sign a
    # bundle of a type this workbench does not have yet.
    people = (("ines", INES, roles.POLICY_OWNERS), ("tomas", TOMAS, roles.RISK_REVIEWERS))
    for name, private, group in people:
        person = make_user(name, group)
        registered[name] = signing.signing_key_register(
            actor=None, user=person, public_key=public_key_pem(private),
            origin=SigningKey.Origin.CLI,
        )  # fmt: skip
    # Both statements dated a day before the keys were registered here.
    earlier = (registered["tomas"].created_at - dt.timedelta(days=1)).astimezone(dt.UTC)
    stamp = earlier.replace(microsecond=0).isoformat()
    with pytest.raises(BundleInvalid) as caught:
        bundle_import(actor=None, data=bundle(approved_at=stamp, published_at=stamp))
    assert caught.value.problem is Problem.DATED
    assert "before key" in caught.value.reason and "existed" in caught.value.reason
    assert not DecisionType.objects.filter(key="pharmacy.generic_substitution").exists()
