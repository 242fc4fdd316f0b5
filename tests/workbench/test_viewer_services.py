"""A viewer changes nothing in the services either, whatever calls them (a page, a command):
on a decision type of another domain (a laboratory's sample release), the viewer may not queue
a replay of recorded decisions nor register a signing key; its owner and reviewer may."""

from __future__ import annotations

import io

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from django.core.exceptions import PermissionDenied
from django.core.management import CommandError, call_command

from contracts import roles
from contracts.models import AuditEvent, SigningKey
from contracts.services import access_grant, decision_type_create
from publishing import replay, signing
from publishing.models import ReceiptReplay

pytestmark = pytest.mark.django_db


@pytest.fixture
def lab(make_user):
    """`lab.sample.release`, owned by pat (a policy owner), reviewed by rhea and read by vic,
    neither of whom is in a site group."""
    pat = make_user("pat", roles.POLICY_OWNERS)
    people = {"pat": pat, "rhea": make_user("rhea"), "vic": make_user("vic")}
    decision_type = decision_type_create(
        actor=pat, key="lab.sample.release", title="Release a sample batch"
    )
    access_grant(actor=pat, decision_type=decision_type, user=people["rhea"], role="reviewer")
    access_grant(actor=pat, decision_type=decision_type, user=people["vic"], role="viewer")
    return decision_type, people


def public_pem() -> str:
    key = Ed25519PrivateKey.generate().public_key()
    return key.public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo).decode("ascii")


def test_a_viewer_cannot_queue_a_replay_but_an_owner_and_a_reviewer_can(lab):
    decision_type, people = lab
    version = decision_type.versions.get()
    with pytest.raises(PermissionDenied):
        replay.replay_start(actor=people["vic"], version=version)
    assert not ReceiptReplay.objects.exists()
    for name in ("pat", "rhea"):
        replay.replay_start(actor=people[name], version=version)
    assert ReceiptReplay.objects.count() == 2


def test_a_viewer_cannot_register_a_signing_key_not_even_through_the_operator(lab, tmp_path):
    _decision_type, people = lab
    audited = AuditEvent.objects.count()
    with pytest.raises(PermissionDenied, match="vic owns and reviews no decision type"):
        signing.signing_key_register(
            actor=people["vic"], user=people["vic"], public_key=public_pem(), origin="cli"
        )
    pem = tmp_path / "vic.pub.pem"
    pem.write_text(public_pem())
    with pytest.raises(CommandError, match="only they register a signing key"):
        call_command("register_signing_key", "vic", str(pem), stdout=io.StringIO())
    assert not SigningKey.objects.exists()
    assert AuditEvent.objects.count() == audited


def test_the_types_reviewer_and_owner_register_keys_and_a_demoted_one_no_longer_can(lab):
    decision_type, people = lab
    for name in ("pat", "rhea"):
        signing.signing_key_register(
            actor=people[name], user=people[name], public_key=public_pem(), origin="cli"
        )
    access_grant(actor=people["pat"], decision_type=decision_type, user=people["rhea"],
                 role="viewer")  # fmt: skip
    with pytest.raises(PermissionDenied):
        signing.signing_key_register(
            actor=people["rhea"], user=people["rhea"], public_key=public_pem(), origin="cli"
        )
    assert sorted(SigningKey.objects.values_list("user__username", flat=True)) == ["pat", "rhea"]


def test_the_signing_keys_page_offers_a_viewer_no_form_and_says_why(client, lab):
    _decision_type, people = lab
    client.force_login(people["vic"])
    page = client.get("/signing-keys/").content.decode()
    assert 'id="register-key"' not in page
    assert signing.NO_SIGNING_ROLE_YOURS in page
    client.force_login(people["rhea"])
    assert 'id="register-key"' in client.get("/signing-keys/").content.decode()


def test_a_viewer_cannot_ask_for_the_report_again_even_from_the_service(lab):
    from django.core.exceptions import ValidationError

    from publishing import review

    decision_type, people = lab
    version = decision_type.versions.get()
    with pytest.raises(PermissionDenied):
        review.report_retry(actor=people["vic"], version=version)
    # The owner passes the role check and meets the state's: the report has not failed.
    with pytest.raises(ValidationError):
        review.report_retry(actor=people["pat"], version=version)
