"""A service token acts for the person who created it, as they are now: demote them, or take
the type away from them (their own role, or the group that held it), and the token is refused
with a 403 saying why; give it back and the token works again. Checked at every call.

Most cases on a type of another domain (a laboratory's sample release, nothing published);
one on the demo, where the token really reads Atlas's bundle and records its receipts."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from guardian.shortcuts import assign_perm, remove_perm

from contracts import roles
from contracts.services import access_grant, access_revoke, decision_type_create
from publishing import tokens
from publishing.models import DecisionReceipt
from tests.api.conftest import ATLAS

pytestmark = pytest.mark.django_db

LAB = "lab.sample.release"
STORE = "lab.store.transfer"


@pytest.fixture
def lab(make_user):
    """pat owns both lab types and made a token for both; quinn owns them too (a type keeps
    an owner, so quinn is who demotes pat)."""
    pat = make_user("pat", roles.POLICY_OWNERS)
    quinn = make_user("quinn", roles.POLICY_OWNERS)
    types = {}
    for key in (LAB, STORE):
        types[key] = decision_type_create(actor=pat, key=key, title=key)
        access_grant(actor=pat, decision_type=types[key], user=quinn, role="owner")
    _token, secret = tokens.token_create(actor=pat, name="lims", decision_types=types.values())
    return {"pat": pat, "quinn": quinn, "types": types, "secret": secret}


def receipt_for(key: str) -> dict:
    """A receipt naming `key` (its bundle unknown: judged, refused on its own, never 403)."""
    return {"decision_type": key, "decision_id": "d-1", "bundle_sha256": "0" * 64}


def read(call, secret, key=LAB):
    return call("get", f"/api/v1/types/{key}/bundle", secret)


def record(call, secret, key=LAB):
    return call("post", "/api/v1/decisions", secret, data={"receipts": [receipt_for(key)]},
                content_type="application/json")  # fmt: skip


def test_a_creator_demoted_to_viewer_still_reads_but_no_longer_records(call, lab):
    pat, quinn, secret = lab["pat"], lab["quinn"], lab["secret"]
    assert read(call, secret).status_code == 404  # works: nothing is published yet
    assert record(call, secret).status_code == 200  # works: the receipt is judged
    access_grant(actor=quinn, decision_type=lab["types"][LAB], user=pat, role="viewer")
    assert read(call, secret).status_code == 404
    refused = record(call, secret)
    assert refused.status_code == 403
    assert refused.json()["detail"] == tokens.CREATOR_LOST.format(
        prefix=secret[: tokens.PREFIX_LENGTH], key=LAB, what="recording its decisions (owner)"
    )
    # The other type pat still owns records as before; a malformed type is the receipt's
    # own problem, judged with it.
    assert record(call, secret, STORE).status_code == 200
    malformed = call("post", "/api/v1/decisions", secret, content_type="application/json",
                     data={"receipts": [receipt_for(STORE), {"decision_type": [LAB]}]})  # fmt: skip
    assert malformed.status_code == 200
    assert [r["status"] for r in malformed.json()["results"]] == ["refused", "refused"]
    access_grant(actor=quinn, decision_type=lab["types"][LAB], user=pat, role="owner")
    assert record(call, secret).status_code == 200
    assert not DecisionReceipt.objects.exists()


def test_a_creator_who_loses_the_type_is_refused_reading_it_and_the_index_leaves_it_out(call, lab):
    pat, quinn, secret = lab["pat"], lab["quinn"], lab["secret"]
    access_revoke(actor=quinn, decision_type=lab["types"][LAB], user=pat)
    for path in (f"/api/v1/types/{LAB}/bundle", f"/api/v1/types/{LAB}/versions/1/bundle",
                 f"/api/v1/types/{LAB}/keys", f"/api/v1/types/{LAB}/tests",
                 f"/api/v1/types/{LAB}/versions/1/tests"):  # fmt: skip
        response = call("get", path, secret)
        assert response.status_code == 403, path
        assert "no longer holds a role on 'lab.sample.release'" in response.json()["detail"]
        assert STORE not in response.json()["detail"]
    assert [t["key"] for t in call("get", "/api/v1/types", secret).json()] == [STORE]
    access_revoke(actor=quinn, decision_type=lab["types"][STORE], user=pat)
    nothing = call("get", "/api/v1/types", secret)
    assert nothing.status_code == 403
    assert "any of its decision types" in nothing.json()["detail"]
    assert record(call, secret, STORE).status_code == 403
    access_grant(actor=quinn, decision_type=lab["types"][LAB], user=pat, role="reviewer")
    assert read(call, secret).status_code == 404  # a reviewer reads again
    assert [t["key"] for t in call("get", "/api/v1/types", secret).json()] == [LAB]


def test_a_creator_removed_from_the_group_holding_the_type_is_refused_until_back(call, make_user):
    """The role can come from a group granted on the type: leaving the group loses it."""
    gil = make_user("gil", roles.POLICY_OWNERS)
    decision_type = decision_type_create(actor=gil, key=LAB, title="Release a sample batch")
    team = Group.objects.create(name="Sample release team")
    for codename in roles.ROLE_PERMISSIONS[roles.Role.OWNER]:
        assign_perm(f"contracts.{codename}", team, decision_type)
        remove_perm(f"contracts.{codename}", gil, decision_type)
    gil.groups.add(team)
    _token, secret = tokens.token_create(actor=gil, name="lims", decision_types=[decision_type])
    assert read(call, secret).status_code == 404 and record(call, secret).status_code == 200
    gil.groups.remove(team)
    assert read(call, secret).status_code == 403
    assert record(call, secret).status_code == 403
    gil.groups.add(team)
    assert read(call, secret).status_code == 404 and record(call, secret).status_code == 200


def test_the_demo_token_stops_reading_atlas_when_olivia_loses_it_and_reads_it_again_after(
    call, token_for, olivia, atlas_receipt, demo
):
    from django.contrib.auth import get_user_model

    secret = token_for(ATLAS)
    bundle = f"/api/v1/types/{ATLAS}/bundle"
    assert call("get", bundle, secret).status_code == 200
    # Someone else must own Atlas for olivia to leave it.
    vera = get_user_model().objects.get(username="vera")
    access_grant(actor=olivia, decision_type=demo[ATLAS], user=vera, role="owner")
    access_revoke(actor=vera, decision_type=demo[ATLAS], user=olivia)
    refused = call("get", bundle, secret)
    assert refused.status_code == 403 and b"sha256" not in refused.content
    posted = call("post", "/api/v1/decisions", secret, data={"receipts": [atlas_receipt()]},
                  content_type="application/json")  # fmt: skip
    assert posted.status_code == 403
    assert not DecisionReceipt.objects.exists()
    access_grant(actor=vera, decision_type=demo[ATLAS], user=olivia, role="owner")
    assert call("get", bundle, secret).status_code == 200
    posted = call("post", "/api/v1/decisions", secret, data={"receipts": [atlas_receipt()]},
                  content_type="application/json")  # fmt: skip
    assert posted.json()["accepted"] == 1


def test_the_tokens_page_says_where_a_token_no_longer_works_and_why(client, lab):
    pat, quinn = lab["pat"], lab["quinn"]
    access_revoke(actor=quinn, decision_type=lab["types"][LAB], user=pat)
    access_grant(actor=quinn, decision_type=lab["types"][STORE], user=pat, role="viewer")
    client.force_login(quinn)  # quinn sees no token: only their own
    assert "data-refused" not in client.get("/tokens/").content.decode()
    client.force_login(pat)
    page = client.get("/tokens/").content.decode()
    assert f"Refused for <code>{LAB}</code>: its creator no longer holds a role there." in page
    assert f"Reads but records no receipt for <code>{STORE}</code>" in page
