"""The runtime API: `BundleStore` keeps the last good bundle and picks up a newer one (from
disk when `pull` replaces the file, or by pulling itself), and `decide` compiles against it,
with a receipt that checks against the bundle. The example script runs as documented."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from atlas_bundle import ATLAS, BASE_SLOTS, atlas_bundle, atlas_request, key_set
from serving import BundleServer, served

from compiler import InvalidInput
from compiler_tools import BUNDLE_FILE, BundleStore, NoBundle, decide
from compiler_trust import check_receipt

ROOT = Path(__file__).resolve().parents[2]
V3 = atlas_bundle(version="3")
V4 = atlas_bundle(version="4", parent_sha256=json.loads(V3)["sha256"])


@pytest.fixture
def keys(tmp_path):
    return key_set(tmp_path / "keys")


@pytest.fixture
def directory(tmp_path):
    path = tmp_path / "bundles"
    path.mkdir()
    (path / BUNDLE_FILE).write_bytes(V3)
    return path


def slots(decision) -> dict[str, str]:
    return {s.proposition: str(s.state) for s in decision.output.slots}


def replace_file(directory, data: bytes) -> None:
    """What pull does: a new file renamed over the old one."""
    temporary = directory / ".new"
    temporary.write_bytes(data)
    os.replace(temporary, directory / BUNDLE_FILE)


def wait_for(condition, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False


def test_decide_compiles_against_the_store_s_bundle_with_a_receipt(directory, keys):
    request = atlas_request()
    with BundleStore(directory, public_key=keys, start=False) as store:
        decision = decide(store, request["request"], request["candidates"],
                          directory=request["directory"], receipt=True)  # fmt: skip
    assert slots(decision) == BASE_SLOTS
    assert decision.bundle.manifest.version == "3"
    checked = check_receipt(decision.receipt.to_json(), decision.bundle)
    assert checked.plan_id == decision.output.plan_id
    assert decide(decision.bundle, request["request"], request["candidates"]).receipt is None


def test_decide_refuses_invalid_input_with_every_problem(directory, keys):
    store = BundleStore(directory, public_key=keys, start=False)
    with pytest.raises(InvalidInput) as raised:
        decide(store, {"decision_type": ATLAS["request"]["decision_type"]}, [{"id": 1}])
    assert {tuple(e["loc"])[:1] for e in raised.value.errors} >= {("request",), ("candidates",)}


def test_the_timer_reloads_a_bundle_that_pull_replaced(directory, keys):
    with BundleStore(directory, public_key=keys, interval=0.05) as store:
        assert store.current().manifest.version == "3"
        replace_file(directory, V4)
        assert wait_for(lambda: store.current().manifest.version == "4")
        assert store.loaded_at is not None and store.last_error is None


def test_a_file_that_does_not_verify_keeps_the_last_good_bundle(directory, keys):
    store = BundleStore(directory, public_key=keys, start=False)
    replace_file(directory, V4.replace(b'"token_budget":760', b'"token_budget":999'))
    assert store.refresh() is False
    assert store.current().manifest.version == "3"
    assert "does not verify" in store.last_error and "kept the bundle loaded before" in (
        store.last_error
    )
    (directory / BUNDLE_FILE).unlink()
    store.refresh()
    assert store.current().manifest.version == "3" and "cannot read" in store.last_error


def test_an_empty_directory_has_no_bundle_and_says_why(tmp_path, keys):
    store = BundleStore(tmp_path, public_key=keys, start=False)
    with pytest.raises(NoBundle, match=r"no bundle that verifies .* \(cannot read .*"):
        store.current()


def test_a_store_with_a_url_pulls_and_keeps_the_last_good_bundle(tmp_path, keys):
    server = BundleServer("/api/v1/types/atlas/bundle")
    with served(server.httpd):
        server.serve(V3, '"v3"')
        store = BundleStore(tmp_path / "pulled", public_key=keys, url=server.url,
                            token="t", start=False)  # fmt: skip
        assert store.current().manifest.version == "3"
        server.serve(V4, '"v4"')
        assert store.refresh() is True
        assert store.current().manifest.version == "4"
        server.serve(V3, '"old"')  # a rollback: refused, version 4 stays
        assert store.refresh() is False
        assert store.current().manifest.version == "4"
        assert "lower than version 4" in store.last_error


def test_the_example_script_decides_from_a_pulled_directory(directory, keys):
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "runtime_service.py"), str(directory),
         str(keys), str(ROOT / "examples" / "atlas.json"), "--receipt"],
        capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    printed = json.loads(result.stdout)
    assert printed["bundle"]["version"] == "3"
    assert printed["slots"] == BASE_SLOTS
    assert printed["receipt"].startswith("d-")
