"""`evidence-compiler pull`: If-None-Match, verification against pinned keys, an atomic
replace only when the served bundle verifies, and the previous bundle kept on every failure.
Served by a real http.server on 127.0.0.1 in a thread."""

from __future__ import annotations

import io
import json
import socket
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from atlas_bundle import ATLAS_TYPE, STRANGER, atlas_bundle, key_set
from serving import served

from compiler_tools import BUNDLE_FILE, ETAG_FILE, STATE_FILE, main

TOKEN = "svc-token-123"


class Server:
    """What the fake bundle endpoint answers, and the requests it saw."""

    def __init__(self) -> None:
        self.status = 200
        self.body = b""
        self.etag: str | None = None
        self.requests: list[dict[str, str]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.requests.append(dict(self.headers.items()))
                if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                    self._answer(401, b'{"detail": "unauthorised"}')
                elif server.etag and self.headers.get("If-None-Match") == server.etag:
                    self._answer(304, b"")
                else:
                    self._answer(server.status, server.body)

            def _answer(self, status: int, body: bytes) -> None:
                self.send_response(status)
                if server.etag and status in (200, 304):
                    self.send_header("ETag", server.etag)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/api/v1/bundles/atlas/latest"

    def serve(self, body: bytes, etag: str | None) -> None:
        self.status, self.body, self.etag = 200, body, etag


@pytest.fixture
def server():
    srv = Server()
    with served(srv.httpd):
        yield srv


@pytest.fixture
def setup(tmp_path):
    token = tmp_path / "token"
    token.write_text(TOKEN + "\n")
    return {
        "token": token,
        "keys": key_set(tmp_path / "keys", ATLAS_TYPE, "refund.eligibility"),
        "out": tmp_path / "bundles",
    }


def pull(setup, url, token=None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    argv = ["pull", url, "--token-file", str(token or setup["token"]),
            "--public-key", str(setup["keys"]), "--out", str(setup["out"])]  # fmt: skip
    code = main(argv, out, err)
    return code, out.getvalue(), err.getvalue()


V3 = atlas_bundle(version="3")
V4 = atlas_bundle(version="4", parent_sha256=json.loads(V3)["sha256"])


def test_a_verified_bundle_is_stored_with_its_etag_then_a_304_rewrites_nothing(server, setup):
    server.serve(V3, '"v3"')
    code, out, err = pull(setup, server.url)
    assert code == 0, err
    assert "updated: credit.review.continuation version 3" in out
    stored = setup["out"] / BUNDLE_FILE
    assert stored.read_bytes() == V3
    assert (setup["out"] / ETAG_FILE).read_text().strip() == '"v3"'
    assert server.requests[0]["Authorization"] == f"Bearer {TOKEN}"
    assert "If-None-Match" not in server.requests[0]

    before = stored.stat().st_mtime_ns
    code, out, _ = pull(setup, server.url)
    assert code == 0
    assert server.requests[1]["If-None-Match"] == '"v3"'
    assert "304" in out
    assert stored.stat().st_mtime_ns == before
    assert stored.read_bytes() == V3


def test_a_newer_bundle_replaces_the_old_one_and_leaves_no_temporary_file(server, setup):
    server.serve(V3, '"v3"')
    assert pull(setup, server.url)[0] == 0
    server.serve(V4, '"v4"')
    code, out, _ = pull(setup, server.url)
    assert code == 0
    assert "version 4" in out
    assert (setup["out"] / BUNDLE_FILE).read_bytes() == V4
    assert sorted(p.name for p in setup["out"].iterdir()) == [BUNDLE_FILE, ETAG_FILE, STATE_FILE]


def _tampered(data: bytes) -> bytes:
    return data.replace(b'"token_budget":760', b'"token_budget":999', 1)


@pytest.mark.parametrize(
    "served, reason",
    [
        (_tampered(V4), "the bundle was altered"),
        (atlas_bundle(version="4", publisher=STRANGER), "unknown key"),
        (b"<html>maintenance</html>", "does not verify"),
    ],
    ids=["tampered", "signed-by-an-unpinned-key", "not-a-bundle"],
)
def test_a_bundle_that_does_not_verify_keeps_the_previous_one(server, setup, served, reason):
    server.serve(V3, '"v3"')
    assert pull(setup, server.url)[0] == 0
    assert _tampered(V4) != V4
    server.serve(served, '"bad"')
    code, _, err = pull(setup, server.url)
    assert code == 1
    assert reason in err and "kept the previous bundle" in err
    assert (setup["out"] / BUNDLE_FILE).read_bytes() == V3
    assert (setup["out"] / ETAG_FILE).read_text().strip() == '"v3"'


def test_a_bundle_of_another_decision_type_is_refused(server, setup):
    from atlas_bundle import ATLAS

    server.serve(V3, '"v3"')
    assert pull(setup, server.url)[0] == 0
    other = {**ATLAS["contract"], "decision_type": "refund.eligibility"}
    server.serve(atlas_bundle(version="1", contract=other, scenarios=[]), '"r1"')
    code, _, err = pull(setup, server.url)
    assert code == 1
    assert "for 'refund.eligibility', the local one for 'credit.review.continuation'" in err
    assert (setup["out"] / BUNDLE_FILE).read_bytes() == V3


def test_a_wrong_token_is_a_failure_with_the_status_and_stores_nothing(server, setup, tmp_path):
    server.serve(V3, '"v3"')
    wrong = tmp_path / "wrong"
    wrong.write_text("not-the-token")
    code, _, err = pull(setup, server.url, token=wrong)
    assert code == 1
    assert "answered 401" in err and "no bundle stored yet" in err
    assert not (setup["out"] / BUNDLE_FILE).exists()


def test_a_network_error_keeps_the_previous_bundle(server, setup):
    server.serve(V3, '"v3"')
    assert pull(setup, server.url)[0] == 0
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}/latest"
    code, _, err = pull(setup, closed)
    assert code == 1
    assert "cannot reach" in err and "kept the previous bundle" in err
    assert (setup["out"] / BUNDLE_FILE).read_bytes() == V3


def test_unusable_arguments_exit_2_before_any_request(server, setup, tmp_path):
    server.serve(V3, None)
    code, _, err = pull(setup, "http://bundles.example.com/latest")
    assert code == 2 and "clear text" in err
    code, _, err = pull(setup, server.url, token=tmp_path / "missing")
    assert code == 2 and "--token-file" in err
    assert server.requests == []


def test_a_bundle_dated_in_the_future_is_refused_by_the_clock_of_the_puller(
    server, setup, tmp_path
):
    from pharmacy_bundle import INES, REGISTERED, TOMAS, TYPE, bundle

    from compiler_trust import KEY_SET_FILE, key_set_json, public_key_pem

    keys = tmp_path / "pharmacy-keys"
    keys.mkdir()
    entries = [
        {"person": person, "roles": [role], "origin": "cli", "valid_from": REGISTERED,
         f"{role}_types": [TYPE], "public_key": public_key_pem(key)}
        for person, role, key in (("ines", "publish", INES), ("tomas", "approve", TOMAS))
    ]  # fmt: skip
    (keys / KEY_SET_FILE).write_bytes(key_set_json(entries))
    setup = {**setup, "keys": keys}
    server.serve(bundle(approved_at="2099-01-01T00:00:00+00:00"), '"future"')
    code, _, err = pull(setup, server.url)
    assert code == 1
    assert "dated 2099-01-01T00:00:00+00:00, in the future" in err
    assert not (setup["out"] / BUNDLE_FILE).exists()
    server.serve(bundle(), '"now"')
    assert pull(setup, server.url)[0] == 0
