"""Receipts as services post them: the compact format (and the first one, still read), a
batch of 500 within the body limit, and every field a receipt states about its decision
checked against the decision compiled again before a replay counts it."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from tests.api.conftest import ATLAS

ROOT = Path(__file__).resolve().parents[2]


def fifty_candidate_receipt():
    """A receipt of the seed's Atlas decision with 50 candidates (its six, repeated)."""
    from compiler import compile_input, load_input
    from compiler_trust import make_receipt

    document = json.loads((ROOT / "examples/atlas.json").read_text())
    pool = []
    for n in range(50):
        item = copy.deepcopy(document["candidates"][n % len(document["candidates"])])
        item["id"], item["relevance"] = f"{item['id']}-{n}", round(0.3 + n / 100, 2)
        item["content"] = f"evidence {n} " * 40
        pool.append(item)
    compile_document = load_input({**document, "candidates": pool})
    return make_receipt(compile_document, compile_input(compile_document),
                        bundle_sha256="a" * 64)  # fmt: skip


def test_the_compact_format_reads_back_to_the_same_receipt():
    from compiler_trust import FORMAT_COMPACT, compact_receipt, parse_receipt

    receipt = fifty_candidate_receipt()
    compact = compact_receipt(receipt)
    assert compact["format"] == FORMAT_COMPACT
    assert parse_receipt(compact) == receipt
    assert parse_receipt(json.loads(json.dumps(compact))) == receipt


def test_a_batch_of_500_compact_receipts_fits_the_body_limit_with_room(settings):
    from compiler_trust import compact_receipt

    receipt = fifty_candidate_receipt()
    compact = json.dumps({"receipts": [compact_receipt(receipt)] * 500})
    first = json.dumps({"receipts": [receipt.to_json()] * 500})
    assert len(first) > settings.API_BODY_MAX_BYTES  # what services sent before
    assert len(compact) < 0.8 * settings.API_BODY_MAX_BYTES


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda c: c.update(format="evidence-compiler.receipt/9"), "unknown receipt format"),
        (lambda c: c["candidates"]["fields"].append("content"), "never carries evidence content"),
        (lambda c: c["candidates"]["rows"][0].pop(), "a row holds"),
        (lambda c: c["candidates"]["rows"][0].__setitem__(2, 10_000), "is not an index of values"),
        (lambda c: c.pop("plan_id"), "a receipt must have this field"),
        (lambda c: c.update(extra=1), "a receipt has no such field"),
    ],
    ids=["format", "content", "short row", "bad index", "missing field", "unknown field"],
)
def test_a_malformed_receipt_is_refused_with_its_reason(change, message):
    from compiler_trust import ReceiptInvalid, compact_receipt, parse_receipt, receipt_header

    compact = compact_receipt(fifty_candidate_receipt())
    change(compact)
    with pytest.raises(ReceiptInvalid) as caught:
        receipt_header(compact)  # what ingest reads
        parse_receipt(compact)  # what the check reads
    assert message in str(caught.value)


def test_both_formats_are_accepted_and_checked_alike(call, token_for, atlas_receipt):
    from compiler_trust import compact_receipt
    from publishing.models import DecisionReceipt
    from publishing.receipts import receipts_check

    receipts = [atlas_receipt("first-format"), compact_receipt(atlas_receipt("compact"))]
    response = call("post", "/api/v1/decisions", token_for(ATLAS), data={"receipts": receipts},
                    content_type="application/json")  # fmt: skip
    assert response.json()["accepted"] == 2
    rows = receipts_check(DecisionReceipt.objects.order_by("decision_id"))
    assert [(r.decision_id, r.status) for r in rows] == [
        ("compact", "matched"), ("first-format", "matched")]  # fmt: skip
    # Posting the same batch again is safe: duplicates, nothing stored twice.
    again = call("post", "/api/v1/decisions", token_for(ATLAS), data={"receipts": receipts},
                 content_type="application/json")  # fmt: skip
    assert again.json()["duplicate"] == 2 and DecisionReceipt.objects.count() == 2


FORGERIES = {
    "contract_version": lambda r: r.update(contract_version="99"),
    "compiler_version": lambda r: r.update(compiler_version="0.0.1"),
    "packet": lambda r: r.update(packet=[*r["packet"], "note-forged"]),
    "decision_ready": lambda r: r.update(decision_ready=not r["decision_ready"]),
    "plan_id": lambda r: r.update(plan_id="0" * 64),
    "result": lambda r: r.update(result="refused" if r["result"] == "compiled" else "compiled"),
    "slots": lambda r: r["slots"][0].update(state="contradicted"),
    "refusal": lambda r: r.update(refusal={"code": "forged", "message": "forged"}),
}


@pytest.fixture
def forged(demo, token_for, atlas_receipt):
    """One honest receipt and one receipt forging each field, ingested (all accepted)."""
    from publishing import receipts, tokens

    batch = [atlas_receipt("honest")]
    for field, forge in FORGERIES.items():
        receipt = atlas_receipt(f"forged-{field}")
        forge(receipt)
        batch.append(receipt)
    token = tokens.authenticate(token_for(ATLAS))
    outcomes = receipts.receipts_ingest(token=token, receipts=batch)
    assert {o.status for o in outcomes} == {receipts.ACCEPTED}
    return demo[ATLAS]


@pytest.mark.parametrize("field", FORGERIES)
def test_a_forged_field_is_refused_by_the_check_naming_it(forged, field):
    from compiler_trust._receipts import PLAN_MISMATCH
    from publishing.models import DecisionReceipt
    from publishing.receipts import receipts_check

    rows = {r.decision_id: r for r in receipts_check(DecisionReceipt.objects.all())}
    assert rows["honest"].status == "matched"
    row = rows[f"forged-{field}"]
    assert row.status == "refused"
    assert [p["loc"] for p in row.problems] == [[field]]
    assert PLAN_MISMATCH.split("{field}")[0] in row.problems[0]["msg"]


def test_refused_receipts_never_count_in_a_replay_and_the_report_says_why(forged, client, olivia):
    from django.utils import timezone

    from publishing.replaying import replay_receipts

    report = replay_receipts(forged.versions.get(number=1), days=30, now=timezone.now())
    # Against the contract they were made with, only the honest receipt is replayed, and it
    # changes nothing: no forged field shows as a change.
    assert (report["replayed"], report["changed"], report["refused"]) == (1, [], len(FORGERIES))
    assert {e["decision_id"] for e in report["refused_examples"]} == {
        f"forged-{field}" for field in FORGERIES}  # fmt: skip
    client.force_login(olivia)
    client.post(f"/types/{ATLAS}/v2/recorded-decisions/replay/")
    page = client.get(f"/types/{ATLAS}/v2/impact/").content.decode()
    assert f"{len(FORGERIES)} receipt(s) refused" in page
    assert 'data-decision="forged-packet"' in page and "1 decision(s) replayed" in page
    assert "1 receipt(s) recorded for this decision type in all" in page
