"""Key roles are scoped to decision types in the workbench: the exported key set (command and
API) says which types each key may publish and approve for, from its owner's roles on each
type, and `import_bundle` refuses a bundle whose publisher key may not publish its type.

The domain is a harbour: `harbour.berth` (which berth a ship is given) is owned by ada and
reviewed by amos; `harbour.pilotage` (which pilot boards a ship) is owned by bruno alone."""

from __future__ import annotations

import datetime as dt
import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from compiler import sha256_hex
from compiler_trust import (
    FORMAT,
    KEY_MAY_NOT_SIGN_TYPE,
    KEY_SET_FILE,
    ApprovalStatement,
    BundleInvalid,
    Problem,
    PublicationStatement,
    assemble_bundle,
    bundle_body_hash,
    key_id,
    load_public_keys,
    normalise_body,
    serialize_bundle,
    sign_statement,
    verify_bundle,
)
from contracts import roles, services
from contracts.models import ContractVersion, DecisionType
from publishing import review
from tests.review.test_review_bundles import counts

pytestmark = pytest.mark.django_db

BERTH, PILOTAGE = "harbour.berth", "harbour.pilotage"
REPORT = "cd" * 32


@pytest.fixture
def harbour(make_user, devices):
    ada = make_user("ada", roles.POLICY_OWNERS)
    amos = make_user("amos", roles.RISK_REVIEWERS)
    bruno = make_user("bruno", roles.POLICY_OWNERS)
    berth = services.decision_type_create(actor=ada, key=BERTH, title="Berth allocation")
    services.access_grant(actor=ada, decision_type=berth, user=amos, role=roles.Role.REVIEWER)
    services.decision_type_create(actor=bruno, key=PILOTAGE, title="Pilot dispatch")
    for person in (ada, amos, bruno):
        devices.ensure(person)
    return {"ada": ada, "amos": amos, "bruno": bruno}


def bundle_of(decision_type: str, publisher, approver, devices, *, number: str = "2") -> bytes:
    """A bundle of `decision_type` signed on its signers' side with their registered keys, as
    someone with the key files could make it outside the workbench: `publisher` publishes,
    `approver` approves (version 2, no parent: the type's version 1 is a draft here)."""
    publisher_key, approver_key = devices.private_key(publisher), devices.private_key(approver)
    moment = timezone.now().astimezone(dt.UTC).replace(microsecond=0).isoformat()
    who = publisher.get_username()
    body = normalise_body({
        "format": FORMAT,
        "manifest": {
            "decision_type": decision_type, "version": number, "parent_sha256": None,
            "author": who,
            "publisher": {"person": who, "key_id": key_id(publisher_key)},
            "editors": [{"person": who, "key_id": key_id(publisher_key)}],
            "approvers": [{"person": approver.get_username(), "key_id": key_id(approver_key)}],
            "published_at": moment, "compiler_version": "0.1.0", "report_sha256": REPORT,
        },
        "contract": {
            "decision_type": decision_type, "version": number, "purposes": ["allocate_berth"],
            "propositions": [{"key": "draught_fits", "accepted_classes": ["hull_survey"]}],
        },
        "source_classes": [{"key": "hull_survey", "label": "Hull survey", "authority_tier": 1}],
    })  # fmt: skip
    facts = {
        "decision_type": decision_type,
        "version": number,
        "contract_sha256": sha256_hex(body["contract"]),
        "signed_at": moment,
    }
    publication = PublicationStatement(
        **facts, bundle_sha256=bundle_body_hash(body), signer=who, key_id=key_id(publisher_key)
    )
    approval = ApprovalStatement(
        **facts, report_sha256=REPORT, signer=approver.get_username(),
        key_id=key_id(approver_key),
    )  # fmt: skip
    return serialize_bundle(
        assemble_bundle(
            body,
            sign_statement(publication, publisher_key),
            [sign_statement(approval, approver_key)],
        )
    )


def test_the_key_set_says_which_types_each_key_may_publish_and_approve(harbour, tmp_path):
    out = io.StringIO()
    call_command("export_public_keys", str(tmp_path), stdout=out)
    key_set = json.loads((tmp_path / KEY_SET_FILE).read_text())
    assert key_set["format"] == "evidence-workbench.keys/2"
    scopes = {e["person"]: (e["publish_types"], e["approve_types"]) for e in key_set["keys"]}
    assert scopes == {"ada": ([BERTH], []), "amos": ([], [BERTH]), "bruno": ([PILOTAGE], [])}
    assert f"bruno, roles: publish ({PILOTAGE})" in out.getvalue()
    assert f"amos, roles: approve ({BERTH})" in out.getvalue()


def test_import_refuses_a_bundle_published_by_another_types_owner(harbour, devices, tmp_path):
    """The issue's case: bruno owns pilotage only; with his genuine key he publishes a berth
    bundle that amos, the berth's reviewer, approves. Refused, nothing written."""
    forged = bundle_of(BERTH, harbour["bruno"], harbour["amos"], devices)
    path = tmp_path / "forged.json"
    path.write_bytes(forged)
    reason = KEY_MAY_NOT_SIGN_TYPE.format(
        index=0, signer="bruno", role="publisher", key_id=devices.ensure(harbour["bruno"]).key_id,
        action="publish", decision_type=BERTH, types=f"'{PILOTAGE}'",
    )  # fmt: skip
    before = counts()
    with pytest.raises(CommandError) as raised:
        call_command("import_bundle", str(path), stdout=io.StringIO())
    assert reason in str(raised.value)
    with pytest.raises(BundleInvalid) as caught:
        review.bundle_import(actor=None, data=forged)
    assert (caught.value.problem, caught.value.reason) == (Problem.NOT_ALLOWED, reason)
    assert counts() == before
    # The key set the workbench exports refuses it the same way, in verify-bundle's hands.
    call_command("export_public_keys", str(tmp_path / "keys"), stdout=io.StringIO())
    with pytest.raises(BundleInvalid, match="may not publish decision type 'harbour.berth'"):
        verify_bundle(forged, load_public_keys(tmp_path / "keys"))


def test_import_accepts_the_same_approval_of_a_bundle_by_the_types_owner(harbour, devices):
    data = bundle_of(BERTH, harbour["ada"], harbour["amos"], devices)
    imported = review.bundle_import(actor=None, data=data)
    assert imported.created and imported.bundle.decision_type.key == BERTH
    assert imported.bundle.version.status == ContractVersion.Status.PUBLISHED


def test_import_refuses_an_approval_by_someone_who_does_not_review_the_type(harbour, devices):
    """amos reviews the berth, not pilotage: his approval of bruno's pilotage bundle fails."""
    data = bundle_of(PILOTAGE, harbour["bruno"], harbour["amos"], devices)
    before = counts()
    with pytest.raises(BundleInvalid) as caught:
        review.bundle_import(actor=None, data=data)
    assert caught.value.reason == KEY_MAY_NOT_SIGN_TYPE.format(
        index=1, signer="amos", role="approver", key_id=devices.ensure(harbour["amos"]).key_id,
        action="approve", decision_type=PILOTAGE, types=f"'{BERTH}'",
    )  # fmt: skip
    assert counts() == before


def test_a_type_new_here_is_imported_with_its_publisher_and_approvers_roles(
    harbour, devices, make_user
):
    """A type this workbench does not have has nobody's role to check: a policy owner may
    publish it and a risk reviewer approve it (what they could set up here themselves), and
    the import makes them its owner and reviewer, so its next bundle is checked as usual.
    Someone who may not create types here may not bring one in."""
    data = bundle_of("harbour.tugs", harbour["bruno"], harbour["amos"], devices, number="1")
    review.bundle_import(actor=None, data=data)
    tugs = DecisionType.objects.get(key="harbour.tugs")
    assert roles.role_of(harbour["bruno"], tugs) == roles.Role.OWNER
    assert roles.role_of(harbour["amos"], tugs) == roles.Role.REVIEWER
    dora = make_user("dora")  # owns the berth, but may not create types
    berth = DecisionType.objects.get(key=BERTH)
    services.access_grant(
        actor=harbour["ada"], decision_type=berth, user=dora, role=roles.Role.OWNER
    )
    devices.ensure(dora)
    data = bundle_of("harbour.locks", dora, harbour["amos"], devices, number="1")
    with pytest.raises(BundleInvalid, match="may not publish decision type 'harbour.locks'"):
        review.bundle_import(actor=None, data=data)
    assert not DecisionType.objects.filter(key="harbour.locks").exists()


def test_the_api_key_set_carries_the_types(harbour, devices, client):
    """Narrowed to the token's type: ada reviewing pilotage too is not the berth token's
    business (a type's key is not told to someone with no role on it)."""
    from publishing import tokens

    pilotage = DecisionType.objects.get(key=PILOTAGE)
    services.access_grant(
        actor=harbour["bruno"], decision_type=pilotage, user=harbour["ada"],
        role=roles.Role.REVIEWER,
    )  # fmt: skip
    review.bundle_import(
        actor=None, data=bundle_of(BERTH, harbour["ada"], harbour["amos"], devices)
    )
    berth = DecisionType.objects.get(key=BERTH)
    _, secret = tokens.token_create(actor=harbour["ada"], name="berth desk", decision_types=[berth])
    response = client.get(
        f"/api/v1/types/{BERTH}/keys", headers={"Authorization": f"Bearer {secret}"}
    )
    assert response.status_code == 200
    key_set = response.json()
    assert key_set["format"] == "evidence-workbench.keys/2"
    assert {e["person"]: (e["publish_types"], e["approve_types"]) for e in key_set["keys"]} == {
        "ada": ([BERTH], []),
        "amos": ([], [BERTH]),
    }
    assert PILOTAGE not in response.content.decode()


def test_the_key_set_read_at_once_is_each_persons_roles_and_types(
    harbour, make_user, devices, key_from_before
):
    """The key set is read for every key holder at once; each entry says what reading that
    person's roles alone says, a type granted to a group of theirs and a superuser's every
    type included, and adding key holders adds no query."""
    from django.contrib.auth.models import Group
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from guardian.shortcuts import assign_perm

    from publishing import signing

    with CaptureQueriesContext(connection) as few:
        signing.key_set_entries()
    pilots = Group.objects.create(name="Pilotage reviewers")
    cora = make_user("cora")
    cora.groups.add(pilots)
    assign_perm(f"contracts.{roles.REVIEW}", pilots, DecisionType.objects.get(key=PILOTAGE))
    key_from_before(cora)  # she reviews pilotage through her group alone
    devices.ensure(make_user("root2", superuser=True))
    key_from_before(make_user("vic", roles.VIEWERS))  # a key kept after losing the role
    with CaptureQueriesContext(connection) as more:
        entries = signing.key_set_entries()

    assert len(more) == len(few)
    assert {entry["person"] for entry in entries} == {
        "ada",
        "amos",
        "bruno",
        "cora",
        "root2",
        "vic",
    }
    for entry in entries:
        person = type(harbour["ada"]).objects.get(username=entry["person"])
        types = signing.key_types(person)
        assert entry["roles"] == signing.key_roles(person), entry["person"]
        assert (entry["publish_types"], entry["approve_types"]) == (
            types["publish"],
            types["approve"],
        ), entry["person"]
    by_person = {entry["person"]: entry for entry in entries}
    assert by_person["cora"]["approve_types"] == [PILOTAGE]
    assert by_person["cora"]["roles"] == ["approve"]
    assert by_person["root2"]["publish_types"] == [BERTH, PILOTAGE]
    assert by_person["vic"]["roles"] == []
