"""Every endpoint of /api/v1/ × {no token, a token for another type, a revoked token, a valid
token}, ETag and 304, receipts accepted and refused, and the call log."""

from __future__ import annotations

import pytest

from tests.api.conftest import ATLAS, REFUND

BUNDLE = f"/api/v1/types/{ATLAS}/bundle"
VERSION_1 = f"/api/v1/types/{ATLAS}/versions/1/bundle"
KEYS = f"/api/v1/types/{ATLAS}/keys"
TESTS = f"/api/v1/types/{ATLAS}/tests"
TESTS_1 = f"/api/v1/types/{ATLAS}/versions/1/tests"
DECISIONS = "/api/v1/decisions"

READS = [BUNDLE, VERSION_1, KEYS, TESTS, TESTS_1]


def post_receipts(call, secret, receipts):
    return call("post", DECISIONS, secret, data={"receipts": receipts},
                content_type="application/json")  # fmt: skip


# --------------------------------------------------------------------------- no token, revoked


def test_reads_without_a_usable_token_answer_401(call, token_for):
    revoked = token_for(ATLAS, revoked=True)
    for secret in (None, "ewt_not-a-token", revoked):
        for path in [*READS, "/api/v1/types"]:
            response = call("get", path, secret)
            assert response.status_code == 401, (path, secret)
            assert response["WWW-Authenticate"].startswith("Bearer")
            assert b"sha256" not in response.content


@pytest.mark.parametrize("kind", ["none", "revoked"])
def test_posting_receipts_without_a_usable_token_answers_401_and_stores_nothing(
    kind, call, token_for, atlas_receipt
):
    from publishing.models import DecisionReceipt

    secret = token_for(ATLAS, revoked=True) if kind == "revoked" else None
    response = post_receipts(call, secret, [atlas_receipt()])
    assert response.status_code == 401
    assert not DecisionReceipt.objects.exists()


def test_a_token_of_a_deactivated_owner_answers_401(call, token_for, olivia):
    secret = token_for(ATLAS)
    olivia.is_active = False
    olivia.save()
    assert call("get", BUNDLE, secret).status_code == 401


# --------------------------------------------------------------------------- wrong scope


@pytest.mark.parametrize("path", READS)
def test_a_type_outside_the_tokens_scope_answers_exactly_like_a_missing_one(path, call, token_for):
    secret = token_for(REFUND)
    outside = call("get", path, secret)
    missing = call("get", path.replace(ATLAS, "no.such.type"), secret)
    assert outside.status_code == missing.status_code == 404
    assert outside.json()["detail"].replace(ATLAS, "X") == missing.json()["detail"].replace(
        "no.such.type", "X"
    )
    assert "ETag" not in outside


def test_the_index_lists_only_the_tokens_types(call, token_for):
    assert [t["key"] for t in call("get", "/api/v1/types", token_for(REFUND)).json()] == [REFUND]
    both = call("get", "/api/v1/types", token_for(ATLAS, REFUND)).json()
    assert [t["key"] for t in both] == [ATLAS, REFUND]


def test_a_receipt_for_a_type_outside_the_scope_is_refused_as_unknown(
    call, token_for, atlas_receipt
):
    from publishing.models import DecisionReceipt

    response = post_receipts(call, token_for(REFUND), [atlas_receipt()])
    assert response.status_code == 200
    (result,) = response.json()["results"]
    assert result["status"] == "refused"
    assert result["errors"][0]["msg"] == f"no decision type '{ATLAS}' is visible to this token"
    assert not DecisionReceipt.objects.exists()


# --------------------------------------------------------------------------- valid


def test_the_index_names_the_latest_version_and_its_bundle_hash(call, token_for, demo):
    from contracts.models import Bundle

    (entry,) = call("get", "/api/v1/types", token_for(ATLAS)).json()
    bundle = Bundle.objects.get(decision_type=demo[ATLAS], version__number=1)
    assert entry["latest_version"] == 1
    assert entry["sha256"] == bundle.sha256
    assert entry["bundle_url"].endswith(BUNDLE)
    refund = call("get", "/api/v1/types", token_for(REFUND)).json()[0]
    assert refund["latest_version"] is None and refund["sha256"] is None


@pytest.mark.parametrize("path", [BUNDLE, VERSION_1])
def test_a_bundle_is_served_byte_for_byte_with_a_strong_etag_and_304(path, call, token_for, demo):
    from contracts.models import Bundle

    secret = token_for(ATLAS)
    stored = Bundle.objects.get(decision_type=demo[ATLAS], version__number=1)
    response = call("get", path, secret)
    assert response.status_code == 200
    assert response.content == stored.data
    assert response["ETag"] == f'"{stored.sha256}"'
    again = call("get", path, secret, headers={"If-None-Match": response["ETag"]})
    assert again.status_code == 304
    assert again.content == b""
    assert again["ETag"] == response["ETag"]
    other = call("get", path, secret, headers={"If-None-Match": '"' + "0" * 64 + '"'})
    assert other.status_code == 200


@pytest.mark.parametrize("path", [TESTS, TESTS_1])
def test_the_test_suite_is_served_byte_for_byte_with_its_sha256_as_etag_and_304(
    path, call, token_for, demo
):
    from contracts.models import BundleTestSuite

    secret = token_for(ATLAS)
    stored = BundleTestSuite.objects.get(bundle__decision_type=demo[ATLAS])
    response = call("get", path, secret)
    assert response.status_code == 200
    assert response.content == stored.data
    assert response["ETag"] == f'"{stored.sha256}"'
    assert 'filename="credit.review.continuation-v1.tests.json"' in response["Content-Disposition"]
    again = call("get", path, secret, headers={"If-None-Match": response["ETag"]})
    assert (again.status_code, again.content) == (304, b"")


def test_the_bundle_carries_no_scenario_and_its_suite_verifies_against_its_digest(
    call, token_for, tmp_path
):
    from compiler_trust import load_public_keys, verify_bundle, verify_suite

    secret = token_for(ATLAS)
    bundle_bytes = call("get", BUNDLE, secret).content
    (tmp_path / "keys.json").write_bytes(call("get", KEYS, secret).content)
    bundle = verify_bundle(bundle_bytes, load_public_keys(tmp_path / "keys.json"))
    suite = verify_suite(call("get", TESTS, secret).content, bundle)
    assert bundle.tests is not None and bundle.tests.count == len(suite.scenarios) > 1
    assert b'"scenarios"' not in bundle_bytes and len(bundle_bytes) < 100_000


def test_a_version_without_a_bundle_and_a_type_with_nothing_published_answer_404(call, token_for):
    secret = token_for(ATLAS, REFUND)
    assert call("get", f"/api/v1/types/{ATLAS}/versions/2/bundle", secret).status_code == 404
    assert call("get", f"/api/v1/types/{REFUND}/bundle", secret).status_code == 404
    assert call("get", f"/api/v1/types/{REFUND}/keys", secret).status_code == 404
    assert call("get", f"/api/v1/types/{ATLAS}/versions/2/tests", secret).status_code == 404
    assert call("get", f"/api/v1/types/{REFUND}/tests", secret).status_code == 404


def test_the_key_set_verifies_the_served_bundle(call, token_for, tmp_path):
    from compiler_trust import load_public_keys, verify_bundle

    secret = token_for(ATLAS)
    keys = tmp_path / "keys.json"
    keys.write_bytes(call("get", KEYS, secret).content)
    trusted = load_public_keys(keys)
    verified = verify_bundle(call("get", BUNDLE, secret).content, trusted)
    assert verified.manifest.decision_type == ATLAS
    assert {s.key_id for s in verified.signatures} == set(trusted)


def test_a_valid_receipt_is_stored_once_and_posting_it_again_is_a_duplicate(
    call, token_for, atlas_receipt
):
    from publishing.models import DecisionReceipt

    secret = token_for(ATLAS)
    receipt = atlas_receipt()
    first = post_receipts(call, secret, [receipt]).json()
    assert (first["accepted"], first["refused"]) == (1, 0)
    assert first["results"][0]["decision_id"] == receipt["decision_id"]
    again = post_receipts(call, secret, [receipt]).json()
    assert (again["accepted"], again["duplicate"]) == (0, 1)
    stored = DecisionReceipt.objects.get()
    assert stored.receipt == receipt
    assert stored.bundle.version.number == 1


def test_a_batch_accepts_the_good_receipts_and_refuses_the_bad_with_their_reasons(
    call, token_for, atlas_receipt
):
    """Ingest refuses at once what it reads (content, an unknown bundle); what takes a
    compile (forged slots) is refused by the check that runs before a replay counts it."""
    from compiler_trust import CARRIES_CONTENT
    from publishing.models import DecisionReceipt
    from publishing.receipts import receipts_check

    good = atlas_receipt("good")
    with_content = atlas_receipt("content")
    with_content["candidates"][0]["content"] = "the evidence text itself"
    wrong_slots = atlas_receipt("forged")
    wrong_slots["slots"][0]["state"] = "contradicted"
    unknown_bundle = atlas_receipt("elsewhere")
    unknown_bundle["bundle_sha256"] = "1" * 64
    response = post_receipts(call, token_for(ATLAS),
                             [good, with_content, wrong_slots, unknown_bundle])  # fmt: skip
    body = response.json()
    assert response.status_code == 200
    assert [r["status"] for r in body["results"]] == ["accepted", "refused", "accepted", "refused"]
    assert body["results"][1]["errors"][0] == {
        "loc": ["candidates", 0, "content"], "msg": CARRIES_CONTENT}  # fmt: skip
    assert body["results"][3]["errors"][0]["loc"] == ["bundle_sha256"]
    receipts_check(DecisionReceipt.objects.all())
    verdicts = {r.decision_id: (r.status, [p["loc"] for p in r.problems])
                for r in DecisionReceipt.objects.all()}  # fmt: skip
    assert verdicts == {"good": ("matched", []), "forged": ("refused", [["slots"]])}


def test_one_decision_id_with_other_content_is_refused(call, token_for, atlas_receipt):
    secret = token_for(ATLAS)
    post_receipts(call, secret, [atlas_receipt("same-id")])
    changed = atlas_receipt("same-id")
    changed["request"]["token_budget"] -= 1
    result = post_receipts(call, secret, [changed]).json()["results"][0]
    assert result["status"] == "refused"
    assert result["errors"][0]["loc"] == ["decision_id"]


def test_a_batch_over_the_cap_is_refused_whole(call, token_for, atlas_receipt, settings):
    from publishing.models import DecisionReceipt
    from workbench import api

    receipt = atlas_receipt()
    response = post_receipts(call, token_for(ATLAS), [receipt] * (api.RECEIPT_BATCH_MAX + 1))
    assert response.status_code == 413
    assert not DecisionReceipt.objects.exists()


def test_the_api_needs_no_csrf_token_and_ignores_the_session(token_for, atlas_receipt, olivia):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(olivia)
    # A signed-in person without a token gets nothing: the session is not the API's sign-in.
    assert client.get(BUNDLE).status_code == 401
    response = client.post(DECISIONS, {"receipts": [atlas_receipt()]},
                           content_type="application/json",
                           headers={"Authorization": f"Bearer {token_for(ATLAS)}"})  # fmt: skip
    assert response.status_code == 200


def test_every_call_is_recorded_with_token_endpoint_type_and_status(call, token_for):
    from publishing.models import ApiCall, ServiceToken

    secret = token_for(REFUND)
    call("get", BUNDLE, secret)
    call("get", BUNDLE)
    token = ServiceToken.objects.get()
    calls = list(ApiCall.objects.order_by("id").values_list(
        "token", "endpoint", "decision_type_key", "status"))  # fmt: skip
    assert calls == [
        (token.pk, "GET /api/v1/types/<key>/bundle", ATLAS, 404),
        (None, "GET /api/v1/types/<key>/bundle", "", 401),
    ]
    assert token.last_used_at is not None


def test_the_openapi_description_lists_every_endpoint(client):
    schema = client.get("/api/v1/openapi.json").json()
    assert set(schema["paths"]) == {
        "/api/v1/types", "/api/v1/types/{key}/bundle",
        "/api/v1/types/{key}/versions/{number}/bundle",
        "/api/v1/types/{key}/keys", "/api/v1/decisions", "/api/v1/types/{key}/tests",
        "/api/v1/types/{key}/versions/{number}/tests",
    }  # fmt: skip
    assert "BatchOutcome" in schema["components"]["schemas"]
