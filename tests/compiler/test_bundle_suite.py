"""A format-3 bundle names its test suite by sha256 and count in the signed manifest and does
not carry the scenarios: `test BUNDLE --tests FILE` runs them after checking the file against
that digest, `pull` fetches them only with `--with-tests`, and a service (`BundleStore`,
`decide`) never needs them. Format-2 bundles, which carry their scenarios, still verify and
test as they always did."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path

import pytest
from atlas_bundle import (
    APPROVER,
    ATLAS_TYPE,
    BASE_SLOTS,
    PUBLISHER,
    atlas_bundle,
    atlas_bundle_3,
    atlas_request,
    atlas_scenario,
    key_set,
)
from serving import BundleServer, served

from compiler_tools import BUNDLE_FILE, TESTS_FILE, BundleStore, decide, main
from compiler_trust import (
    FORMAT,
    FORMAT_2,
    BundleInvalid,
    Problem,
    SuiteInvalid,
    load_public_keys,
    serialize_suite,
    sign_bundle,
    split_suite,
    verify_bundle,
    verify_suite,
)

TOKEN = "svc-token-456"
LATEST = "/api/v1/types/credit.review.continuation/bundle"
TESTS_3 = "/api/v1/types/credit.review.continuation/versions/3/tests"
# Many scenarios, so that a bundle that carried them would be large.
SCENARIOS = [atlas_scenario(f"atlas-{n:03}") for n in range(40)]
BUNDLE, SUITE = atlas_bundle_3(scenarios=SCENARIOS)
assert SUITE is not None


@pytest.fixture
def keys(tmp_path: Path) -> Path:
    return key_set(tmp_path / "keys")


def run(*argv: str | Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


# --------------------------------------------------------------------------- the format


def test_the_bundle_names_its_suite_in_the_signed_manifest_and_carries_no_scenario(keys):
    document = json.loads(BUNDLE)
    assert document["format"] == FORMAT == "evidence-workbench.bundle/3"
    assert "scenarios" not in document
    digest = document["manifest"]["tests"]
    assert digest["count"] == 40
    bundle = verify_bundle(BUNDLE, load_public_keys(keys))
    assert bundle.tests is not None and bundle.tests.sha256 == digest["sha256"]
    assert len(verify_suite(SUITE, bundle).scenarios) == 40
    # The bundle's size does not grow with its suite: one scenario or forty, only the count's
    # digits differ.
    one, _ = atlas_bundle_3()
    assert len(BUNDLE) - len(one) == 1
    assert len(SUITE) > 20 * len(BUNDLE)


def test_changing_the_digest_in_the_manifest_breaks_the_bundle_not_just_the_link(keys):
    document = json.loads(BUNDLE)
    document["manifest"]["tests"]["sha256"] = "0" * 64
    with pytest.raises(BundleInvalid) as caught:
        verify_bundle(document, load_public_keys(keys))
    assert caught.value.problem is Problem.ALTERED


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.replace(b'"waiver_valid":"unknown"', b'"waiver_valid":"supported"', 1),
        lambda d: d.replace(b'"atlas-000"', b'"atlas-zzz"', 1),
        lambda d: d.replace(b',"expected":{', b',"expected":{"extra":1,', 1),
    ],
)
def test_a_tampered_suite_is_refused_against_the_digest(keys, change):
    bundle = verify_bundle(BUNDLE, load_public_keys(keys))
    tampered = change(SUITE)
    assert tampered != SUITE
    with pytest.raises(SuiteInvalid) as caught:
        verify_suite(tampered, bundle)
    assert caught.value.problem is Problem.ALTERED
    assert caught.value.reason.startswith("the test suite was altered, or belongs to another")
    assert bundle.tests is not None and bundle.tests.sha256 in caught.value.reason


def test_another_versions_suite_and_a_reformatted_copy_are_refused(keys):
    bundle = verify_bundle(BUNDLE, load_public_keys(keys))
    _, other = atlas_bundle_3(version="4", scenarios=SCENARIOS)
    assert other is not None
    with pytest.raises(SuiteInvalid) as caught:
        verify_suite(other, bundle)
    assert caught.value.problem is Problem.ALTERED
    pretty = json.dumps(json.loads(SUITE), indent=1).encode()
    with pytest.raises(SuiteInvalid) as caught:
        verify_suite(pretty, bundle)
    assert caught.value.problem is Problem.NOT_CANONICAL
    # Parsed, the same content is the suite.
    assert len(verify_suite(json.loads(pretty), bundle).scenarios) == 40


def test_a_format_3_body_with_scenarios_or_a_format_2_manifest_naming_a_suite_is_refused():
    body = {k: v for k, v in json.loads(BUNDLE).items() if k not in ("sha256", "signatures")}
    signers = [("olivia", "publisher", PUBLISHER), ("rafael", "approver", APPROVER)]
    with pytest.raises(BundleInvalid, match="carries no scenarios: they travel in its test"):
        sign_bundle({**body, "scenarios": []}, signers)
    with pytest.raises(BundleInvalid, match="manifest.tests is a member of"):
        sign_bundle({**body, "format": FORMAT_2}, signers)


def test_split_suite_moves_the_scenarios_out_and_an_empty_suite_is_none():
    body = {
        k: v for k, v in json.loads(atlas_bundle()).items() if k not in ("sha256", "signatures")
    }
    split, suite = split_suite(body)
    assert split["format"] == FORMAT and "scenarios" not in split
    assert suite is not None and [s["name"] for s in suite["scenarios"]] == ["atlas-base"]
    assert split["manifest"]["tests"]["count"] == 1
    empty, none = split_suite({**body, "scenarios": []})
    assert none is None and empty["manifest"]["tests"] is None


# --------------------------------------------------------------------------- test BUNDLE --tests


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    bundle, suite = tmp_path / "bundle.json", tmp_path / "tests.json"
    bundle.write_bytes(BUNDLE)
    suite.write_bytes(SUITE)
    return bundle, suite


def test_test_with_the_suite_runs_its_expectations(files, keys):
    bundle, suite = files
    code, out, err = run("test", bundle, "--tests", suite, "--public-key", keys, "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["passed"] is True
    assert report["totals"]["scenarios"] == 40


def test_test_with_a_suite_whose_expectation_fails_exits_1_naming_it(tmp_path, keys):
    wrong = atlas_scenario("atlas-wrong", {**BASE_SLOTS, "waiver_valid": "supported"})
    data, suite = atlas_bundle_3(scenarios=[atlas_scenario(), wrong])
    assert suite is not None
    (tmp_path / "b.json").write_bytes(data)
    (tmp_path / "t.json").write_bytes(suite)
    code, out, _ = run("test", tmp_path / "b.json", "--tests", tmp_path / "t.json",
                       "--public-key", keys)  # fmt: skip
    assert code == 1
    assert "atlas-wrong" in out and "waiver_valid" in out


def test_test_without_the_suite_says_where_to_get_it(files, keys):
    bundle, _ = files
    code, _, err = run("test", bundle, "--public-key", keys)
    assert code == 2
    assert "its 40 scenario(s) travel in a separate test suite" in err
    assert "--tests FILE" in err and "/versions/3/tests" in err


def test_test_with_a_tampered_suite_exits_2_and_runs_nothing(files, keys):
    bundle, suite = files
    suite.write_bytes(SUITE.replace(b'"supported"', b'"unknown"', 1))
    code, out, err = run("test", bundle, "--tests", suite, "--public-key", keys)
    assert code == 2
    assert "not this bundle's test suite: the test suite was altered" in err
    assert out == ""


def test_a_format_2_bundle_still_tests_with_its_own_scenarios_and_refuses_tests(tmp_path, keys):
    old = tmp_path / "old.json"
    old.write_bytes(atlas_bundle())
    assert run("test", old, "--public-key", keys)[0] == 0
    code, _, err = run("test", old, "--public-key", keys, "--tests", tmp_path / "x.json")
    assert code == 2
    assert "which carries its scenarios itself" in err


# --------------------------------------------------------------------------- pull --with-tests


@pytest.fixture
def server():
    srv = BundleServer(LATEST)
    with served(srv.httpd):
        yield srv


@pytest.fixture
def setup(tmp_path: Path, keys: Path) -> dict[str, Path]:
    token = tmp_path / "token"
    token.write_text(TOKEN)
    return {"token": token, "keys": keys, "out": tmp_path / "out"}


def pull(server: BundleServer, setup: dict[str, Path], *extra: str) -> tuple[int, str, str]:
    return run("pull", server.url, "--token-file", setup["token"], "--public-key",
               setup["keys"], "--out", setup["out"], *extra)  # fmt: skip


def test_pull_without_tests_fetches_the_bundle_alone(server, setup):
    server.serve(BUNDLE, '"b3"')
    server.routes[TESTS_3] = (SUITE, None)
    code, _, err = pull(server, setup)
    assert code == 0, err
    assert [path for path, _ in server.requests] == [LATEST]
    assert (setup["out"] / BUNDLE_FILE).read_bytes() == BUNDLE
    assert not (setup["out"] / TESTS_FILE).exists()


def test_pull_with_tests_verifies_and_stores_the_suite_once(server, setup):
    server.serve(BUNDLE, '"b3"')
    server.routes[TESTS_3] = (SUITE, None)
    code, out, err = pull(server, setup, "--with-tests")
    assert code == 0, err
    assert "tests: 40 scenario(s) of credit.review.continuation version 3" in out
    assert (setup["out"] / TESTS_FILE).read_bytes() == SUITE
    assert [path for path, _ in server.requests] == [LATEST, TESTS_3]
    # The suite in place is the bundle's: not fetched again.
    code, out, _ = pull(server, setup, "--with-tests")
    assert code == 0 and "tests unchanged" in out
    assert [path for path, _ in server.requests][2:] == [LATEST]
    bundle, suite = setup["out"] / BUNDLE_FILE, setup["out"] / TESTS_FILE
    assert run("test", bundle, "--tests", suite, "--public-key", setup["keys"])[0] == 0


def test_pull_with_a_tampered_suite_keeps_the_bundle_and_stores_no_suite(server, setup):
    server.serve(BUNDLE, '"b3"')
    server.routes[TESTS_3] = (SUITE.replace(b'"supported"', b'"unknown"', 1), None)
    code, _, err = pull(server, setup, "--with-tests")
    assert code == 1
    assert "the served test suite does not verify: the test suite was altered" in err
    assert (setup["out"] / BUNDLE_FILE).read_bytes() == BUNDLE
    assert not (setup["out"] / TESTS_FILE).exists()


def test_a_newer_bundle_pulled_without_tests_drops_the_older_suite(server, setup):
    server.serve(BUNDLE, '"b3"')
    server.routes[TESTS_3] = (SUITE, None)
    assert pull(server, setup, "--with-tests")[0] == 0
    newer, _ = atlas_bundle_3(version="4", scenarios=SCENARIOS,
                              parent_sha256=json.loads(BUNDLE)["sha256"])  # fmt: skip
    server.serve(newer, '"b4"')
    assert pull(server, setup)[0] == 0
    assert not (setup["out"] / TESTS_FILE).exists()


# --------------------------------------------------------------------------- a service


def test_a_service_decides_against_a_format_3_bundle_without_its_suite(tmp_path, keys):
    directory = tmp_path / "svc"
    directory.mkdir()
    (directory / BUNDLE_FILE).write_bytes(BUNDLE)
    store = BundleStore(directory, public_key=keys)
    request = atlas_request()
    decision = decide(store, request["request"], request["candidates"],
                      directory=request.get("directory"))  # fmt: skip
    assert {s.proposition: str(s.state) for s in decision.output.slots} == BASE_SLOTS
    assert decision.bundle.manifest.decision_type == ATLAS_TYPE


def test_scenario_input_reads_a_scenario_from_the_suite(keys):
    from compiler import compile_input
    from compiler_trust import scenario_input

    bundle = verify_bundle(BUNDLE, load_public_keys(keys))
    suite = verify_suite(SUITE, bundle)
    output = compile_input(scenario_input(bundle, "atlas-007", suite))
    assert {s.proposition: s.state.value for s in output.slots} == BASE_SLOTS
    with pytest.raises(KeyError):
        scenario_input(bundle, "atlas-007")  # the bundle itself carries none


def test_serialize_suite_is_the_one_file_form():
    parsed = json.loads(SUITE)
    assert serialize_suite(copy.deepcopy(parsed)) == SUITE
