"""The API's request bodies: gzip accepted, a bomb refused before it is expanded, and every
refusal of a body (too large, not gzip, not JSON, another encoding) or failure answered in
JSON naming the problem, with DEBUG on (development) as off (production)."""

from __future__ import annotations

import gzip
import json
import zlib

import pytest
from django.test import override_settings

from tests.api.conftest import ATLAS

DECISIONS = "/api/v1/decisions"


def post(call, secret, body: bytes, **headers):
    return call("post", DECISIONS, secret, data=body, content_type="application/json",
                headers=headers)  # fmt: skip


@pytest.fixture
def secret(token_for):
    return token_for(ATLAS)


def test_a_gzipped_batch_is_read_as_the_plain_one(call, secret, atlas_receipt):
    from publishing.models import DecisionReceipt

    body = json.dumps({"receipts": [atlas_receipt("zipped")]}).encode()
    response = post(call, secret, gzip.compress(body), **{"Content-Encoding": "gzip"})
    assert response.status_code == 200, response.content
    assert response.json()["accepted"] == 1
    assert DecisionReceipt.objects.get().receipt == atlas_receipt("zipped")


@pytest.mark.parametrize("debug", [True, False], ids=["development", "production"])
def test_a_gzip_bomb_is_refused_once_it_passes_the_limit_never_expanded_whole(call, secret, debug):
    from workbench import api_body

    # 50 MB of zeros gzips to about 50 KB, under the limit (cut to 64 KB) as sent: refusing
    # it is inflating's own check, which stops a piece past the limit.
    bomb = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = bytes(1 << 20)
    data = b"".join(bomb.compress(zeros) for _ in range(50)) + bomb.flush()
    assert len(data) < 64 * 1024
    with override_settings(DEBUG=debug, API_BODY_MAX_BYTES=64 * 1024):
        response = post(call, secret, data, **{"Content-Encoding": "gzip"})
    assert response.status_code == 413
    assert response["Content-Type"].startswith("application/json")
    assert response.json() == {"detail": api_body.INFLATED_TOO_LARGE.format(limit=64 * 1024)}
    assert "65,536 bytes" in response.json()["detail"]


def test_inflating_stops_one_piece_past_the_limit():
    from django.core.exceptions import RequestDataTooBig

    from workbench.api_body import gunzip_bounded

    data = gzip.compress(bytes(10_000_000))
    assert gunzip_bounded(gzip.compress(b"[1, 2]"), 10) == b"[1, 2]"
    with pytest.raises(RequestDataTooBig):
        gunzip_bounded(data, 100_000)


@pytest.mark.parametrize("debug", [True, False], ids=["development", "production"])
def test_a_body_over_the_limit_is_refused_in_json_naming_the_limit(call, secret, debug):
    from workbench import api_body

    body = json.dumps({"receipts": [{"decision_id": "x" * 5000}]}).encode()
    with override_settings(DEBUG=debug, API_BODY_MAX_BYTES=4000):
        response = post(call, secret, body)
    assert response.status_code == 413
    assert response.json() == {"detail": api_body.BODY_TOO_LARGE.format(limit=4000)}


@pytest.mark.parametrize("debug", [True, False], ids=["development", "production"])
def test_damaged_gzip_and_unparseable_json_are_400_in_json(call, secret, debug):
    with override_settings(DEBUG=debug):
        cut = post(call, secret, gzip.compress(b'{"receipts": []}')[:-12],
                   **{"Content-Encoding": "gzip"})  # fmt: skip
        garbage = post(call, secret, b"not gzip at all", **{"Content-Encoding": "gzip"})
        not_json = post(call, secret, b'{"receipts": [')
    for response in (cut, garbage):
        assert response.status_code == 400
        assert response.json()["detail"].startswith("The request body is not valid gzip data")
    assert not_json.status_code == 400
    assert not_json["Content-Type"].startswith("application/json")
    assert "detail" in not_json.json()


def test_another_content_encoding_is_415_naming_what_is_accepted(call, secret):
    response = post(call, secret, b"{}", **{"Content-Encoding": "br"})
    assert response.status_code == 415
    assert "Content-Encoding: gzip" in response.json()["detail"]


@pytest.mark.parametrize("debug", [True, False], ids=["development", "production"])
def test_a_failure_answers_json_not_a_traceback_page(call, secret, debug, monkeypatch):
    from publishing import receipts
    from workbench import api_body

    def broken(**kwargs):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(receipts, "receipts_ingest", broken)
    with override_settings(DEBUG=debug):
        response = post(call, secret, json.dumps({"receipts": []}).encode())
    assert response.status_code == 500
    assert response.json() == {"detail": api_body.SERVER_ERROR}
    assert b"Traceback" not in response.content


def test_pages_outside_the_api_keep_their_own_answers(client, olivia):
    """The form refusal (a page with a 413) is the site's; only /api/ answers JSON."""
    client.force_login(olivia)
    with override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=100):
        response = client.post(f"/types/{ATLAS}/v2/recorded-decisions/replay/", {"x": "y" * 500})
    assert response["Content-Type"].startswith("text/")
