"""Decision receipts (compiler_trust, `compile --receipt`): content replaced by its sha256,
the check an ingesting service runs against the bundle, and replay against another contract."""

from __future__ import annotations

import copy
import io
import json

import pytest
from atlas_bundle import ATLAS, ROOT, atlas_bundle, atlas_request, key_set

from compiler import compile_input
from compiler_tools import main
from compiler_trust import (
    CARRIES_CONTENT,
    ReceiptInvalid,
    check_receipt,
    compile_input_from_bundle,
    content_sha256,
    load_public_keys,
    make_receipt,
    replay,
    verify_bundle,
)


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    return load_public_keys(key_set(tmp_path_factory.mktemp("keys")))


@pytest.fixture(scope="module")
def bundle(keys):
    return verify_bundle(atlas_bundle(), keys)


@pytest.fixture(scope="module")
def decided(bundle):
    document = compile_input_from_bundle(bundle, atlas_request())
    output = compile_input(document)
    return document, output, make_receipt(document, output, bundle_sha256=bundle.sha256)


def test_a_receipt_carries_metadata_and_the_sha256_of_each_content_never_the_text(decided):
    document, output, receipt = decided
    data = receipt.to_json()
    text = json.dumps(data)
    for candidate in ATLAS["candidates"]:
        assert candidate["content"] not in text
    by_id = {c["id"]: c for c in data["candidates"]}
    first = ATLAS["candidates"][0]
    assert by_id[first["id"]]["content_sha256"] == content_sha256(first["content"])
    assert by_id[first["id"]]["evidence_class"] == first["evidence_class"]
    assert data["plan_id"] == output.plan_id
    assert {s["proposition"]: s["state"] for s in data["slots"]}["waiver_valid"] == "unknown"
    assert data["packet"] == list(output.packet_ids)
    assert data["refusal"] is None
    # The same decision gets the same id; another request another one.
    assert make_receipt(document, output, bundle_sha256=data["bundle_sha256"]).decision_id == (
        receipt.decision_id
    )


def test_check_receipt_accepts_the_receipt_of_its_bundle(decided, bundle):
    assert check_receipt(decided[2].to_json(), bundle) == decided[2]


def test_check_receipt_refuses_content_wherever_it_is(decided, bundle):
    data = decided[2].to_json()
    data["candidates"][1]["content"] = "Approved overdraft limit: 2.0m."
    with pytest.raises(ReceiptInvalid) as caught:
        check_receipt(data, bundle)
    assert caught.value.errors == [{"loc": ["candidates", 1, "content"], "msg": CARRIES_CONTENT}]
    assert "invalid receipt" in str(caught.value)


def test_check_receipt_refuses_another_bundle_and_a_forged_plan(decided, bundle, keys):
    other = verify_bundle(atlas_bundle(version="4"), keys)
    with pytest.raises(ReceiptInvalid) as caught:
        check_receipt(decided[2].to_json(), other)
    assert caught.value.errors[0]["loc"] == ["bundle_sha256"]
    assert other.sha256 in caught.value.errors[0]["msg"]

    forged = decided[2].to_json()
    forged["slots"][2]["state"] = "supported"  # claims waiver_valid was established
    forged["plan_id"] = "0" * 64
    with pytest.raises(ReceiptInvalid) as caught:
        check_receipt(forged, bundle)
    assert [e["loc"] for e in caught.value.errors] == [["plan_id"], ["slots"]]
    assert "does not match its bundle" in caught.value.errors[0]["msg"]


def test_replay_is_what_compiling_the_original_candidates_against_a_contract_gives(decided):
    document, output, receipt = decided
    same = replay(receipt, document.contract)
    assert same.plan_id == output.plan_id
    assert same.slots == output.slots
    # Against a stricter contract (the waiver class no longer accepted) the replay is
    # exactly the compile of the original input, content and all, against that contract.
    stricter = copy.deepcopy(ATLAS["contract"])
    for proposition in stricter["propositions"]:
        proposition["accepted_classes"] = [
            c for c in proposition["accepted_classes"] if c != "facility_record"
        ] or ["policy_clause"]
    from compiler import load_input

    original = load_input({**atlas_request(), "contract": stricter})
    expected = compile_input(original)
    replayed = replay(receipt.to_json(), original.contract)
    assert replayed.plan_id == expected.plan_id
    assert replayed.slots == expected.slots
    assert replayed.slot("facility_limit").state != output.slot("facility_limit").state


def test_compile_receipt_writes_a_receipt_that_checks_against_the_bundle(tmp_path, bundle):
    path = tmp_path / "b.json"
    path.write_bytes(atlas_bundle())
    request = tmp_path / "request.json"
    request.write_text(json.dumps(atlas_request()))
    receipt_path = tmp_path / "receipt.json"
    out, err = io.StringIO(), io.StringIO()
    code = main(["compile", str(request), "--bundle", str(path), "--public-key",
                 str(key_set(tmp_path / "keys")), "--receipt", str(receipt_path),
                 "--decision-id", "loan-42"], out, err)  # fmt: skip
    assert code == 0, err.getvalue()
    written = json.loads(receipt_path.read_text())
    assert written["decision_id"] == "loan-42"
    assert written["plan_id"] == json.loads(out.getvalue())["plan_id"]
    assert check_receipt(written, bundle).decision_id == "loan-42"


def test_compile_receipt_without_a_bundle_is_invalid_input(tmp_path):
    err = io.StringIO()
    atlas = str(ROOT / "examples" / "atlas.json")
    code = main(["compile", atlas, "--receipt", str(tmp_path / "r.json")], io.StringIO(), err)
    assert code == 2
    assert "--receipt: a receipt names its bundle" in err.getvalue()
    assert not (tmp_path / "r.json").exists()
