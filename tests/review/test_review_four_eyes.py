"""Four eyes beyond the workbench: publishing refuses an approval by the publisher or by
someone who has since edited the version, the published bundle names its publisher, editors
and approvers with their keys in its signed manifest, the exported key set says which keys
may approve, and import refuses a bundle that breaks four eyes with nothing written."""

from __future__ import annotations

import datetime as dt
import io
import json

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command

from compiler_trust import (
    KEY_SET_FILE,
    BundleInvalid,
    Problem,
    load_public_keys,
    serialize_bundle,
    sign_bundle,
)
from compiler_trust._bundle import reasons as bundles
from contracts import roles, services
from contracts.models import AuditAction, Bundle, ContractVersion
from publishing import review, signing

pytestmark = pytest.mark.django_db


def _body(data: bytes) -> dict:
    return {k: v for k, v in json.loads(data).items() if k not in ("sha256", "signatures")}


@pytest.fixture
def private(devices):
    """A person's private key, from their own key file (the workbench holds none)."""
    from django.contrib.auth import get_user_model

    return lambda username: devices.private_key(get_user_model().objects.get(username=username))


def test_a_reviewer_made_owner_cannot_publish_their_own_approval(
    approved, owner, reviewer, devices
):
    """The workbench itself could produce publisher = approver: a reviewer approves, is then
    made owner, and publishes. Publishing refuses, naming them."""
    services.access_grant(
        actor=owner, decision_type=approved.decision_type, user=reviewer, role=roles.Role.OWNER
    )
    reviewer = type(reviewer).objects.get(pk=reviewer.pk)  # fresh permission cache
    with pytest.raises(ValidationError) as raised:
        devices.publish(actor=reviewer, version=approved)
    assert raised.value.messages == [
        review.APPROVER_IS_PUBLISHER.format(username="rafael", number=approved.number)
    ]
    approved.refresh_from_db()
    assert approved.status == ContractVersion.Status.APPROVED
    assert not Bundle.objects.exists()
    # Nor does anyone else while he owns rather than reviews the type: the key set would not
    # let his key approve it, so the bundle would not verify.
    with pytest.raises(ValidationError) as raised:
        devices.publish(actor=owner, version=approved)
    assert raised.value.messages == [
        review.APPROVERS_NO_LONGER_REVIEW.format(
            number=approved.number, key=approved.decision_type.key, people="rafael"
        )
    ]
    # Made reviewer again, his approval counts and someone else publishes it.
    services.access_grant(
        actor=owner, decision_type=approved.decision_type, user=reviewer, role=roles.Role.REVIEWER
    )
    assert devices.publish(actor=owner, version=approved).version == approved


def test_an_approver_who_has_since_become_an_editor_does_not_publish(
    approved, owner, reviewer, devices
):
    """Every edit through the services returns the version to draft, so this needs an edit
    recorded some other way (an import, older code); publishing must still refuse it rather
    than sign a bundle whose approver is one of its editors."""
    services.audit_record(
        actor=reviewer,
        action=AuditAction.SETTINGS_UPDATED,
        summary="edited outside the services",
        version=approved,
    )
    with pytest.raises(ValidationError) as raised:
        devices.publish(actor=owner, version=approved)
    assert raised.value.messages == [
        review.APPROVER_IS_EDITOR.format(username="rafael", number=approved.number)
    ]
    assert not Bundle.objects.exists()


def test_the_signed_manifest_names_everyone_with_their_keys(published, keys):
    manifest = published.document["manifest"]
    olivia, rafael = keys["owner"].key_id, keys["reviewer"].key_id
    assert published.document["format"] == bundles.FORMAT
    assert manifest["publisher"] == {"person": "olivia", "key_id": olivia}
    assert manifest["editors"] == [{"person": "olivia", "key_id": olivia}]
    assert manifest["approvers"] == [{"person": "rafael", "key_id": rafael}]
    assert manifest["author"] == "olivia"


def test_export_public_keys_says_which_keys_may_approve(
    published, viewer, tmp_path, key_from_before
):
    vera = key_from_before(viewer)
    out = io.StringIO()
    call_command("export_public_keys", str(tmp_path), stdout=out)
    key_set = json.loads((tmp_path / KEY_SET_FILE).read_text())
    roles_by_person = {entry["person"]: entry["roles"] for entry in key_set["keys"]}
    assert roles_by_person == {"olivia": ["publish"], "rafael": ["approve"], "vera": []}
    loaded = load_public_keys(tmp_path)
    assert loaded[vera.key_id].roles == frozenset()
    assert loaded[vera.key_id].person == "vera"
    assert "vera" in out.getvalue() and "roles: none" in out.getvalue()


def test_a_bundle_approved_by_a_viewer_with_a_key_does_not_import(
    published, viewer, tmp_path, key_from_before, private
):
    """A viewer who kept a key from when they reviewed could "approve" a bundle by signing
    it; the trusted key set does not let their key approve now, so the bundle is refused and
    nothing written."""
    key_from_before(viewer)
    body = _body(published.data)
    body["manifest"]["approvers"] = [{"person": "vera"}]
    body["manifest"]["version"] = body["contract"]["version"] = "7"
    # Signed after vera's key was registered (the published bundle's own date may be the second
    # before it): what is refused is her role, not the date.
    signed = dt.datetime.now(dt.UTC).replace(microsecond=0) + dt.timedelta(seconds=1)
    body["manifest"]["published_at"] = signed.isoformat()
    forged = _signed_with_statements(
        body, [("olivia", "publisher", private("olivia")), ("vera", "approver", private("vera"))]
    )
    path = tmp_path / "forged.json"
    path.write_bytes(forged)
    before = (ContractVersion.objects.count(), Bundle.objects.count())
    with pytest.raises(BundleInvalid) as raised:
        review.bundle_import(actor=None, data=forged)
    assert raised.value.problem is Problem.NOT_ALLOWED
    assert "'vera' (approver" in raised.value.reason and "may not approve" in raised.value.reason
    from django.core.management import CommandError

    with pytest.raises(CommandError, match="may not approve"):
        call_command("import_bundle", str(path))
    assert (ContractVersion.objects.count(), Bundle.objects.count()) == before


def test_a_bundle_approved_by_its_publisher_does_not_import(published, private):
    body = _body(published.data)
    body["manifest"]["approvers"] = [{"person": "olivia"}]
    body["manifest"]["version"] = body["contract"]["version"] = "7"
    with pytest.raises(BundleInvalid) as at_signing:
        sign_bundle(
            body,
            [
                ("olivia", "publisher", private("olivia")),
                ("olivia", "approver", private("olivia")),
            ],
        )
    assert at_signing.value.reason == bundles.APPROVER_IS_PUBLISHER.format(person="olivia")
    before = Bundle.objects.count()
    with pytest.raises(BundleInvalid) as raised:
        review.bundle_import(actor=None, data=_hand_signed(body, private("olivia")))
    assert raised.value.problem is Problem.FOUR_EYES
    assert raised.value.reason == bundles.APPROVER_IS_PUBLISHER.format(person="olivia")
    assert Bundle.objects.count() == before


def _signed_with_statements(body: dict, signers: list) -> bytes:
    """A bundle as the workbench assembles it, each signer's statement made with their own
    key file: what someone holding those keys could produce outside the workbench."""
    from compiler import sha256_hex
    from compiler_trust import (
        ApprovalStatement,
        PublicationStatement,
        assemble_bundle,
        bundle_body_hash,
        key_id,
        normalise_body,
        sign_statement,
    )

    body = json.loads(json.dumps(body))
    manifest = body["manifest"]
    keys = {person: key for person, _, key in signers}
    for entry in [manifest["publisher"], *manifest["approvers"]]:
        entry["key_id"] = key_id(keys[entry["person"]])
    normal = normalise_body(body)
    common = {
        "decision_type": manifest["decision_type"],
        "version": manifest["version"],
        "contract_sha256": sha256_hex(normal["contract"]),
        "signed_at": manifest["published_at"],
    }
    publication, approvals = None, []
    for person, role, key in signers:
        who = {"signer": person, "key_id": key_id(key)}
        if role == "publisher":
            statement = PublicationStatement(
                **common, **who, bundle_sha256=bundle_body_hash(normal)
            )
            publication = sign_statement(statement, key)
        else:
            statement = ApprovalStatement(**common, **who, report_sha256=manifest["report_sha256"])
            approvals.append(sign_statement(statement, key))
    return serialize_bundle(assemble_bundle(normal, publication, approvals))


def _hand_signed(body: dict, key) -> bytes:
    """What a forger can write without sign_bundle's checks: the body, its hash, and a
    valid signature per role made with olivia's own key."""
    import base64

    from compiler_trust import bundle_body_hash, key_id

    body = json.loads(json.dumps(body))
    body["manifest"]["approvers"] = [{"person": "olivia", "key_id": key_id(key)}]
    digest = bundle_body_hash(body)
    signature = base64.b64encode(key.sign(digest.encode())).decode()
    entries = [
        {"signer": "olivia", "role": role, "key_id": key_id(key), "algorithm": "ed25519",
         "signature": signature}
        for role in ("publisher", "approver")
    ]  # fmt: skip
    return serialize_bundle({**body, "sha256": digest, "signatures": entries})


def test_key_roles_come_from_groups_and_per_type_roles(atlas, owner, make_user, superuser):
    """A person in no group gets `approve` by being made reviewer of one type, `publish` by
    being made owner; a superuser may do both; a viewer neither."""
    sam = make_user("sam")
    assert signing.key_roles(sam) == []
    services.access_grant(actor=owner, decision_type=atlas, user=sam, role=roles.Role.REVIEWER)
    assert signing.key_roles(type(sam).objects.get(pk=sam.pk)) == ["approve"]
    services.access_grant(actor=owner, decision_type=atlas, user=sam, role=roles.Role.OWNER)
    assert signing.key_roles(type(sam).objects.get(pk=sam.pk)) == ["publish"]
    services.access_grant(actor=owner, decision_type=atlas, user=sam, role=roles.Role.VIEWER)
    assert signing.key_roles(type(sam).objects.get(pk=sam.pk)) == []
    assert signing.key_roles(superuser) == ["publish", "approve"]
