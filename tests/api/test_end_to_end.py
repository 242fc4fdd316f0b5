"""Issue 12's "done when", end to end: the demo is published, an owner creates a token, and
a virtual environment holding only the `evidence-compiler` wheel (no Django) pulls the bundle
from the live workbench (200), pulls again (304, the file untouched), refuses a tampered
bundle while keeping the good one, compiles the Atlas request against it with a receipt, and
posts the receipt, which version 2's impact report then shows replayed.

Marked `distribution` like tests/compiler/test_distribution.py, whose wheel builder it uses:
it installs the wheel's dependencies through pip's configured index."""

from __future__ import annotations

import http.server
import io
import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.api.conftest import ATLAS, atlas_request

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "compiler"))
from test_distribution import build_wheel  # noqa: E402

pytestmark = pytest.mark.distribution

POST_RECEIPT = """
import json, sys, urllib.request
url, token, path = sys.argv[1:]
body = json.dumps({"receipts": [json.load(open(path))]}).encode()
request = urllib.request.Request(url, data=body, method="POST", headers={
    "Authorization": f"Bearer {token}", "Content-Type": "application/json"})
with urllib.request.urlopen(request) as answer:
    print(answer.read().decode())
"""


def serve_once_tampered(body: bytes) -> tuple[http.server.HTTPServer, str]:
    """A server on a loopback port answering every GET with `body` (a forged bundle)."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("ETag", '"' + "f" * 64 + '"')
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_port}/api/v1/types/{ATLAS}/bundle"


@pytest.fixture
def venv(tmp_path_factory) -> Path:
    """A virtual environment holding only the evidence-compiler wheel and its dependencies."""
    root = tmp_path_factory.mktemp("e2e")
    wheel = build_wheel(root / "dist")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
         "--quiet", "--disable-pip-version-check", str(wheel)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr
    return venv


def test_publish_pull_304_tamper_compile_post_and_replay(live_server, venv, tmp_path, client):
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from contracts.models import ContractVersion, DecisionType
    from publishing import replay, tokens
    from publishing.models import DecisionReceipt

    call_command("load_demo", stdout=io.StringIO())
    olivia = get_user_model().objects.get(username="olivia")
    atlas = DecisionType.objects.get(key=ATLAS)
    _token, secret = tokens.token_create(actor=olivia, name="retrieval", decision_types=[atlas])

    work = tmp_path / "work"
    work.mkdir()
    token_file = work / "token"
    token_file.write_text(secret + "\n")
    api = f"{live_server.url}/api/v1"
    cli = str(venv / "bin" / "evidence-compiler")

    def run(*argv: object) -> subprocess.CompletedProcess:
        return subprocess.run([cli, *map(str, argv)], cwd=work, capture_output=True, text=True)

    # The key set comes from the API too (a deployment pins it once).
    keys = work / "keys.json"
    fetched = subprocess.run(
        [str(venv / "bin" / "python"), "-c",
         "import sys, urllib.request as u; r = u.Request(sys.argv[1], headers={'Authorization': "
         "'Bearer ' + sys.argv[2]}); sys.stdout.buffer.write(u.urlopen(r).read())",
         f"{api}/types/{ATLAS}/keys", secret],
        capture_output=True, check=True,
    )  # fmt: skip
    keys.write_bytes(fetched.stdout)
    out = work / "credit"
    pull = ("pull", f"{api}/types/{ATLAS}/bundle", "--token-file", token_file,
            "--public-key", keys, "--out", out)  # fmt: skip

    first = run(*pull)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith(f"updated: {ATLAS} version 1")
    bundle = out / "bundle.json"
    good = bundle.read_bytes()
    stat = bundle.stat()
    assert (out / "bundle.json.etag").read_text().strip() == f'"{json.loads(good)["sha256"]}"'

    second = run(*pull)
    assert second.returncode == 0, second.stderr
    assert "304 Not Modified" in second.stdout
    assert (bundle.stat().st_ino, bundle.stat().st_mtime_ns) == (stat.st_ino, stat.st_mtime_ns)

    forged = good.replace(b"annual_credit_review", b"annual_credit_reviex", 1)
    assert forged != good
    server, forged_url = serve_once_tampered(forged)
    try:
        tampered = run("pull", forged_url, "--token-file", token_file, "--public-key", keys,
                       "--out", out)  # fmt: skip
    finally:
        server.shutdown()
    assert tampered.returncode == 1
    assert "does not verify" in tampered.stderr
    assert bundle.read_bytes() == good

    request = work / "request.json"
    request.write_text(json.dumps(atlas_request()))
    receipt = work / "receipt.json"
    compiled = run("compile", request, "--bundle", bundle, "--public-key", keys,
                   "--receipt", receipt, "--decision-id", "atlas-2026-08-30")  # fmt: skip
    assert compiled.returncode == 0, compiled.stderr

    posted = subprocess.run(
        [str(venv / "bin" / "python"), "-c", POST_RECEIPT, f"{api}/decisions", secret, receipt],
        capture_output=True, text=True,
    )  # fmt: skip
    assert posted.returncode == 0, posted.stderr
    assert json.loads(posted.stdout)["accepted"] == 1
    assert DecisionReceipt.objects.get().decision_id == "atlas-2026-08-30"

    version_2 = ContractVersion.objects.get(decision_type=atlas, number=2)
    done = replay.replay_start(actor=olivia, version=version_2)  # the immediate task backend
    assert done.status == "done", done.error
    assert done.result["replayed"] == 1
    client.force_login(olivia)
    page = client.get(f"/types/{ATLAS}/v2/impact/").content.decode()
    assert "Recorded decisions" in page
    assert "1 decision(s) replayed" in page
    changed = {d["decision_id"]: d for d in done.result["changed"]}
    assert "atlas-2026-08-30" in changed
    assert 'data-decision="atlas-2026-08-30"' in page
    assert any(f["proposition"] == "waiver_valid" for f in changed["atlas-2026-08-30"]["flips"])
