"""`evidence-compiler serve`: decisions over HTTP/JSON against the pulled bundle, JSON errors
for bad requests, health and Prometheus metrics, and a newer bundle picked up after `pull`
replaced the file, without a restart. The server runs in a subprocess on a loopback port."""

from __future__ import annotations

import contextlib
import copy
import http.client
import io
import json
import socket
import time

import pytest
from atlas_bundle import ATLAS, ATLAS_TYPE, BASE_SLOTS, atlas_bundle, atlas_request, key_set
from serving import BundleServer, DecisionServer, served

from compiler_tools import main
from compiler_trust import check_receipt, load_public_keys, verify_bundle

V3 = atlas_bundle(version="3")
# Version 4 drops `continuation_rule`: a plan anyone can tell apart from version 3's.
V4_CONTRACT = copy.deepcopy(ATLAS["contract"])
V4_CONTRACT["propositions"] = [
    p for p in V4_CONTRACT["propositions"] if p["key"] != "continuation_rule"
]
V4 = atlas_bundle(
    version="4", parent_sha256=json.loads(V3)["sha256"], contract=V4_CONTRACT, scenarios=[]
)


@pytest.fixture
def keys(tmp_path):
    return key_set(tmp_path / "keys")


@pytest.fixture
def bundles(tmp_path):
    """A bundle server and a pull of its latest bundle into tmp_path/bundles."""
    token = tmp_path / "token"
    token.write_text("secret\n")
    server = BundleServer(f"/api/v1/types/{ATLAS_TYPE}/bundle")
    with served(server.httpd):

        def pull(keys) -> None:
            argv = ["pull", server.url, "--token-file", str(token), "--public-key", str(keys),
                    "--out", str(tmp_path / "bundles")]  # fmt: skip
            stderr = io.StringIO()
            assert main(argv, io.StringIO(), stderr) == 0, stderr.getvalue()

        server.pull = pull  # type: ignore[attr-defined]
        server.out = tmp_path / "bundles"  # type: ignore[attr-defined]
        yield server


@pytest.fixture
def decisions(bundles, keys):
    bundles.serve(V3, '"v3"')
    bundles.pull(keys)
    server = DecisionServer(bundles.out, keys, "--max-body", "65536")
    yield server
    server.stop()


def request_document(**extra) -> dict:
    document = atlas_request()
    return {"request": document["request"], "candidates": document["candidates"],
            "directory": document["directory"], **extra}  # fmt: skip


def slots(body) -> dict[str, str]:
    return {s["proposition"]: s["state"] for s in body["output"]["slots"]}


def test_a_decision_names_its_bundle_and_carries_a_receipt_on_request(decisions, keys):
    status, body = decisions.decide(request_document(receipt=True))
    assert status == 200, body
    assert slots(body) == BASE_SLOTS
    assert body["bundle"] == {"decision_type": ATLAS_TYPE, "version": "3",
                              "sha256": json.loads(V3)["sha256"]}  # fmt: skip
    bundle = verify_bundle(V3, load_public_keys(keys))
    assert body["receipt"]["format"] == "evidence-compiler.receipt/2"  # what services post
    assert check_receipt(body["receipt"], bundle).plan_id == body["output"]["plan_id"]
    status, body = decisions.decide(request_document())
    assert status == 200 and "receipt" not in body


@pytest.mark.parametrize(
    "method, path, body, status, code",
    [
        ("POST", "/v1/decide", b'{"request": ', 400, "bad_json"),
        ("POST", "/v1/decide", b"[1, 2]", 400, "invalid_input"),
        ("POST", "/v1/decide", b'{"candidates": [], "extra": 1}', 400, "invalid_input"),
        ("POST", "/v1/decide", b'{"candidates": [], "receipt": "yes"}', 400, "invalid_input"),
        ("POST", "/v1/decide", b'{"candidates": [], "decision_id": 7}', 400, "invalid_input"),
        ("POST", "/v1/decide", b" " * 70_000, 413, "too_large"),
        ("GET", "/v1/decide", None, 405, "method_not_allowed"),
        ("GET", "/v1/data/anything", None, 404, "not_found"),
    ],
    ids=[
        "bad-json",
        "not-an-object",
        "unknown-member",
        "receipt-not-bool",
        "decision-id-not-str",
        "oversized",
        "wrong-method",
        "unknown-path",
    ],  # fmt: skip
)
def test_bad_requests_get_json_errors(decisions, method, path, body, status, code):
    answered, error = decisions.call(method, path, body)
    assert answered == status
    assert error["error"]["code"] == code and error["error"]["message"]


def raw_call(url: str, head: bytes, body: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send `head` and `body` as they are (http.client cannot send a chunked body that goes on
    past the limit); the status, headers and body of the answer."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        connection.sendall(head)
        with contextlib.suppress(OSError):  # the server may close as soon as it has refused
            connection.sendall(body)
        answer = http.client.HTTPResponse(connection)
        answer.begin()
        return answer.status, dict(answer.getheaders()), answer.read()


@pytest.mark.parametrize(
    "head, body",
    [
        # Declared, and more than waitress would buffer: refused before the body is read.
        (b"Content-Length: 1000000\r\n", b"{" * 1_000_000),
        # Declared just over the limit.
        (b"Content-Length: 65537\r\n", b"{" * 65_537),
        # No length declared: refused as the chunks pass the limit.
        (b"Transfer-Encoding: chunked\r\n", (b"8000\r\n" + b"{" * 0x8000 + b"\r\n") * 8),
    ],
    ids=["far-over", "just-over", "chunked"],
)
def test_every_oversized_body_is_a_json_error_naming_the_limit(decisions, head, body):
    request = b"POST /v1/decide HTTP/1.1\r\nHost: x\r\n" + head + b"\r\n"
    status, headers, answer = raw_call(decisions.url, request, body)
    assert (status, headers["Content-Type"]) == (413, "application/json")
    error = json.loads(answer)["error"]
    assert error["code"] == "too_large"
    assert "65,536 bytes" in error["message"]
    status, text = decisions.call("GET", "/metrics")
    assert 'evidence_request_errors_total{code="too_large"} 1.0' in text


def test_a_body_at_the_limit_is_read(decisions):
    document = json.dumps(request_document()).encode()
    padded = document + b" " * (65_536 - len(document))
    status, body = decisions.call("POST", "/v1/decide", padded)
    assert status == 200 and slots(body) == BASE_SLOTS


def test_invalid_input_lists_every_problem_with_its_location(decisions):
    document = request_document()
    document["request"] = {**document["request"], "token_budget": -1}
    document["candidates"] = [{"id": "x"}]
    status, body = decisions.decide(document)
    assert status == 400 and body["error"]["code"] == "invalid_input"
    locations = {tuple(e["loc"])[:1] for e in body["error"]["errors"]}
    assert {("request",), ("candidates",)} <= locations


def test_health_and_metrics_count_decisions_refusals_and_errors(decisions):
    assert decisions.call("GET", "/healthz") == (
        200, {"status": "ok", "bundle": {"decision_type": ATLAS_TYPE, "version": "3",
                                         "sha256": json.loads(V3)["sha256"]}},
    )  # fmt: skip
    decisions.decide(request_document())
    other = request_document()
    other["request"] = {**other["request"], "decision_type": "refund.eligibility"}
    status, body = decisions.decide(other)
    assert status == 200 and body["output"]["refusal"]["reason"] == "decision_type_mismatch"
    decisions.call("POST", "/v1/decide", b"{")
    status, text = decisions.call("GET", "/metrics")
    assert status == 200
    assert 'evidence_decisions_total{result="compiled"} 1.0' in text
    assert 'evidence_decisions_total{result="refused"} 1.0' in text
    assert 'evidence_refusals_total{reason="decision_type_mismatch"} 1.0' in text
    assert 'evidence_request_errors_total{code="bad_json"} 1.0' in text
    assert "evidence_compile_seconds_count 2.0" in text
    age = next(line for line in text.splitlines() if line.startswith("evidence_bundle_age"))
    assert float(age.split()[-1]) > 0  # published 2026-09-01, before the clock's now


def test_a_bundle_pulled_while_serving_is_answered_without_a_restart(decisions, bundles, keys):
    status, body = decisions.decide(request_document())
    assert (status, body["bundle"]["version"]) == (200, "3")
    assert "continuation_rule" in slots(body)
    bundles.serve(V4, '"v4"')
    bundles.pull(keys)
    deadline = time.monotonic() + 10
    while body["bundle"]["version"] != "4" and time.monotonic() < deadline:
        time.sleep(0.05)
        status, body = decisions.decide(request_document())
    assert body["bundle"] == {"decision_type": ATLAS_TYPE, "version": "4",
                              "sha256": json.loads(V4)["sha256"]}  # fmt: skip
    assert set(slots(body)) == set(BASE_SLOTS) - {"continuation_rule"}
    assert decisions.process.poll() is None  # the same process throughout


def test_without_a_verified_bundle_health_and_decisions_answer_503(tmp_path, keys):
    (tmp_path / "empty").mkdir()
    server = DecisionServer(tmp_path / "empty", keys)
    try:
        status, body = server.call("GET", "/healthz")
        assert (status, body["error"]["code"]) == (503, "no_bundle")
        status, body = server.decide(request_document())
        assert status == 503 and "no bundle that verifies" in body["error"]["message"]
    finally:
        server.stop()
