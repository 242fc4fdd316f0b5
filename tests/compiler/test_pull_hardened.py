"""`evidence-compiler pull` keeps the last good bundle: a damaged local copy is repaired
rather than kept alive by its ETag, an older signed bundle (a rollback) and a bundle that does
not descend from the one in place (a fork) are refused unless named by --allow-downgrade, an
ETag is stored only beside a verified bundle, and files get the mode asked for. Served by a
real http.server on 127.0.0.1 in a thread, routing the workbench's URLs."""

from __future__ import annotations

import io
import json
import stat

import pytest
from atlas_bundle import ATLAS_TYPE, atlas_bundle, key_set
from serving import BundleServer, served

from compiler_tools import BUNDLE_FILE, ETAG_FILE, STATE_FILE, main

TOKEN = "svc-token-123"
LATEST = f"/api/v1/types/{ATLAS_TYPE}/bundle"


def sha(bundle: bytes) -> str:
    return json.loads(bundle)["sha256"]


V3 = atlas_bundle(version="3")
V4 = atlas_bundle(version="4", parent_sha256=sha(V3))
V5 = atlas_bundle(version="5", parent_sha256=sha(V4))


@pytest.fixture
def server():
    srv = BundleServer(LATEST)
    with served(srv.httpd):
        yield srv


@pytest.fixture
def out(tmp_path):
    return tmp_path / "bundles"


@pytest.fixture
def run(tmp_path, out, server):
    token = tmp_path / "token"
    token.write_text(TOKEN + "\n")
    keys = key_set(tmp_path / "keys")

    def run(*extra: str) -> tuple[int, str, str]:
        stdout, stderr = io.StringIO(), io.StringIO()
        argv = ["pull", server.url, "--token-file", str(token), "--public-key", str(keys),
                "--out", str(out), *extra]  # fmt: skip
        return main(argv, stdout, stderr), stdout.getvalue(), stderr.getvalue()

    return run


def accept(server: BundleServer, run, bundle: bytes, etag: str) -> None:
    server.serve(bundle, etag)
    code, _, err = run()
    assert code == 0, err


def test_a_tampered_local_bundle_is_fetched_again_without_its_etag(server, run, out):
    accept(server, run, V3, '"v3"')
    (out / BUNDLE_FILE).write_bytes(V3.replace(b'"token_budget":760', b'"token_budget":999'))
    code, stdout, stderr = run()
    assert code == 0, stderr
    assert "If-None-Match" not in server.requests[-1][1]
    assert stdout.startswith("repaired: credit.review.continuation version 3")
    assert "the local bundle does not verify" in stderr
    assert (out / BUNDLE_FILE).read_bytes() == V3
    code, stdout, _ = run()  # repaired, so its ETag is trusted again
    assert (code, server.requests[-1][1]["If-None-Match"]) == (0, '"v3"')
    assert "304" in stdout


def test_an_older_signed_bundle_is_refused_and_the_newer_one_stays(server, run, out):
    accept(server, run, V3, '"v3"')
    accept(server, run, V4, '"v4"')
    server.serve(V3, '"made-up"')
    code, stdout, stderr = run()
    assert (code, stdout) == (1, "")
    assert "version 3, lower than version 4 already accepted here" in stderr
    assert "--allow-downgrade 3" in stderr and "kept the previous bundle" in stderr
    assert (out / BUNDLE_FILE).read_bytes() == V4
    assert (out / ETAG_FILE).read_text().strip() == '"v4"'


def test_the_highest_version_survives_a_downgrade_of_the_file_itself(server, run, out):
    """Putting an old bundle in the directory by hand does not lower what was accepted."""
    accept(server, run, V3, '"v3"')
    accept(server, run, V4, '"v4"')
    (out / BUNDLE_FILE).write_bytes(V3)
    server.serve(V3, '"v3"')
    code, _, stderr = run()
    assert code == 0, stderr  # the served bundle is the local one: nothing to do
    assert json.loads((out / STATE_FILE).read_text())["highest_version"] == "4"


def test_allow_downgrade_accepts_exactly_the_version_it_names(server, run, out):
    accept(server, run, V3, '"v3"')
    accept(server, run, V4, '"v4"')
    server.serve(V3, '"v3"')
    assert run("--allow-downgrade", "2")[0] == 1
    code, stdout, _ = run("--allow-downgrade", "3")
    assert code == 0 and "updated: credit.review.continuation version 3" in stdout
    assert (out / BUNDLE_FILE).read_bytes() == V3
    state = json.loads((out / STATE_FILE).read_text())
    assert (state["version"], state["highest_version"], state["sha256"]) == ("3", "3", sha(V3))


@pytest.mark.parametrize(
    "served, why",
    [
        (atlas_bundle(version="4", parent_sha256="0" * 64), f"parent is {'0' * 64}"),
        (atlas_bundle(version="4"), "version 4 names no parent"),
        (atlas_bundle(version="3", scenarios=[]), "a published version never changes"),
    ],
    ids=["other-parent", "no-parent", "same-version-other-content"],
)
def test_a_bundle_that_does_not_descend_from_the_one_in_place_is_refused(
    server, run, out, served, why
):
    accept(server, run, V3, '"v3"')
    server.serve(served, '"fork"')
    code, _, stderr = run()
    assert code == 1
    assert "does not descend from the bundle in place (version 3" in stderr and why in stderr
    assert (out / BUNDLE_FILE).read_bytes() == V3
    assert (out / ETAG_FILE).read_text().strip() == '"v3"'


def test_skipped_versions_are_fetched_to_follow_the_chain(server, run, out):
    accept(server, run, V3, '"v3"')
    server.serve(V5, '"v5"')
    server.serve_version(4, V4)
    code, stdout, stderr = run()
    assert code == 0, stderr
    assert "version 5" in stdout and (out / BUNDLE_FILE).read_bytes() == V5
    fetched = [path for path, _ in server.requests]
    assert fetched[-2:] == [LATEST, f"/api/v1/types/{ATLAS_TYPE}/versions/4/bundle"]


def test_a_version_never_published_is_skipped_while_following_the_chain(server, run, out):
    accept(server, run, V3, '"v3"')
    v6 = atlas_bundle(version="6", parent_sha256=sha(V4))  # version 5 was never published
    server.serve(v6, '"v6"')
    server.serve_version(4, V4)
    code, stdout, stderr = run()
    assert code == 0, stderr
    assert "version 6" in stdout and (out / BUNDLE_FILE).read_bytes() == v6
    asked = [path.rsplit("/", 2)[-2] for path, _ in server.requests[-2:]]
    assert asked == ["5", "4"]


def test_a_skipped_version_from_another_chain_is_a_fork(server, run, out):
    accept(server, run, V3, '"v3"')
    stranger_v4 = atlas_bundle(version="4", parent_sha256="1" * 64, scenarios=[])
    server.serve(atlas_bundle(version="5", parent_sha256=sha(stranger_v4)), '"v5"')
    server.serve_version(4, stranger_v4)
    code, _, stderr = run()
    assert code == 1
    assert "version 4's parent is " + "1" * 64 in stderr
    assert (out / BUNDLE_FILE).read_bytes() == V3


def test_a_made_up_etag_with_a_body_that_does_not_verify_is_not_stored(server, run, out):
    server.serve(b"<html>maintenance</html>", '"made-up"')
    assert run()[0] == 1
    assert not (out / ETAG_FILE).exists() and not (out / BUNDLE_FILE).exists()
    accept(server, run, V3, '"v3"')
    server.serve(V4.replace(b'"version":"4"', b'"version":"9"', 1), '"made-up"')
    assert run()[0] == 1
    assert (out / ETAG_FILE).read_text().strip() == '"v3"'


@pytest.mark.parametrize("extra, mode", [((), 0o644), (("--mode", "0640"), 0o640)])
def test_files_are_written_with_the_mode_asked_for(server, run, out, extra, mode):
    server.serve(V3, '"v3"')
    assert run(*extra)[0] == 0
    for name in (BUNDLE_FILE, ETAG_FILE, STATE_FILE):
        assert stat.S_IMODE((out / name).stat().st_mode) == mode, name


def test_an_unusable_mode_exits_2_before_any_request(server, run):
    server.serve(V3, '"v3"')
    code, _, stderr = run("--mode", "rw-r--r--")
    assert code == 2 and "--mode 'rw-r--r--': expected octal permission bits" in stderr
    assert server.requests == []
