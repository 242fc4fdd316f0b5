"""Bulk ingest: a batch costs the same queries whatever its size, and the token's creator's
role is still asked at every call, gzipped batches of 500 included."""

from __future__ import annotations

import gzip
import json

from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.api.conftest import ATLAS


def ingest_queries(token, receipts) -> int:
    from publishing import receipts as ingest

    with CaptureQueriesContext(connection) as queries:
        outcomes = ingest.receipts_ingest(token=token, receipts=receipts)
    assert {o.status for o in outcomes} == {ingest.ACCEPTED}
    return len(queries)


def test_a_batch_costs_the_same_queries_whatever_its_size(demo, token_for, atlas_receipt):
    from compiler_trust import compact_receipt
    from publishing import tokens

    token = tokens.authenticate(token_for(ATLAS))
    receipt = compact_receipt(atlas_receipt())
    small = [{**receipt, "decision_id": f"s-{n}"} for n in range(2)]
    large = [{**receipt, "decision_id": f"l-{n}"} for n in range(200)]
    assert ingest_queries(token, small) == ingest_queries(token, large)


def test_a_large_gzipped_batch_is_refused_whole_once_the_creator_no_longer_owns_the_type(
    call, token_for, olivia, demo, atlas_receipt
):
    from django.contrib.auth import get_user_model

    from compiler_trust import compact_receipt
    from contracts.services import access_grant, access_revoke
    from publishing.models import DecisionReceipt

    secret = token_for(ATLAS)
    receipt = compact_receipt(atlas_receipt())
    body = gzip.compress(json.dumps({"receipts": [
        {**receipt, "decision_id": f"d-{n}"} for n in range(500)]}).encode())  # fmt: skip

    def post():
        return call("post", "/api/v1/decisions", secret, data=body,
                    content_type="application/json",
                    headers={"Content-Encoding": "gzip"})  # fmt: skip

    vera = get_user_model().objects.get(username="vera")
    access_grant(actor=olivia, decision_type=demo[ATLAS], user=vera, role="owner")
    access_grant(actor=vera, decision_type=demo[ATLAS], user=olivia, role="viewer")
    refused = post()
    assert refused.status_code == 403 and "no longer holds a role" in refused.json()["detail"]
    assert not DecisionReceipt.objects.exists()
    access_grant(actor=vera, decision_type=demo[ATLAS], user=olivia, role="owner")
    assert post().json()["accepted"] == 500
    access_revoke(actor=vera, decision_type=demo[ATLAS], user=olivia)
    assert post().status_code == 403
