"""`python -m compiler_tools`: outputs and exit codes a retrieval service or CI gate relies on."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from mutation_fixtures import DISPENSE_CLASSES_ONE_TIER, write_dispense_directory

from compiler_tools import main

ROOT = Path(__file__).resolve().parents[2]
ATLAS = ROOT / "examples" / "atlas.json"
CONTAMINATED = ROOT / "examples" / "contaminated.json"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_compile_prints_the_packet_and_exits_0():
    code, out, _ = run("compile", str(ATLAS))
    assert code == 0
    doc = json.loads(out)
    assert doc["result"] == "compiled"
    assert doc["blocking"] == ["waiver_valid"]


def test_refused_compile_exits_1_with_the_refusal(tmp_path):
    doc = json.loads(ATLAS.read_text())
    doc["request"]["purpose"] = "marketing"
    path = tmp_path / "refused.json"
    path.write_text(json.dumps(doc))
    code, out, _ = run("compile", str(path))
    assert code == 1
    assert json.loads(out)["refusal"] == {
        "pass": "type-check",
        "reason": "purpose_not_permitted",
        "detail": None,
    }


def test_invalid_input_exits_2_listing_every_problem(tmp_path):
    doc = json.loads(ATLAS.read_text())
    doc["candidates"][0]["tokens"] = -5
    doc["candidates"][1]["relevance"] = 1.5
    doc["candidates"][2]["id"] = doc["candidates"][0]["id"]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    code, out, err = run("compile", str(path))
    assert code == 2 and out == ""
    assert "candidates[0].tokens" in err
    assert "candidates[1].relevance" in err
    assert "duplicate candidate id 'facility-F102'" in err

    code, out, _ = run("compile", "--json", str(path))
    assert code == 2
    listed = json.loads(out)
    assert listed["result"] == "invalid"
    locations = [tuple(e["loc"]) for e in listed["errors"]]
    assert ("candidates", 0, "tokens") in locations
    assert ("candidates", 1, "relevance") in locations
    assert ("candidates", 2, "id") in locations


def test_unreadable_and_malformed_files_are_invalid_input(tmp_path):
    code, _, err = run("compile", str(tmp_path / "missing.json"))
    assert code == 2 and "cannot read" in err
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    code, _, err = run("compile", str(broken))
    assert code == 2 and "not valid JSON" in err


def test_text_that_is_not_unicode_is_invalid_input_not_a_crash(tmp_path):
    latin1 = tmp_path / "latin1.json"
    latin1.write_bytes(b'{"request": "\xff"}')
    code, out, _ = run("compile", str(latin1), "--json")
    assert code == 2
    assert json.loads(out)["result"] == "invalid"
    assert "UTF-8" in json.loads(out)["errors"][0]["msg"]

    # A lone surrogate escape parses as JSON but is no text: it can be neither hashed nor printed.
    doc = json.loads(ATLAS.read_text())
    doc["candidates"][0]["content"] = "x\ud800"
    doc["contract"]["version"] = "3\ud800"
    lone = tmp_path / "lone.json"
    lone.write_text(json.dumps(doc))  # ensure_ascii: written as the escape \\ud800
    code, out, _ = run("compile", str(lone), "--json")
    assert code == 2
    errors = json.loads(out)["errors"]
    assert [e["loc"] for e in errors] == [["candidates", 0, "content"], ["contract", "version"]]


def test_compare_prints_the_three_way_comparison():
    code, out, _ = run("compare", str(CONTAMINATED), "--top-k", "5")
    assert code == 0
    figures = {
        k: (v["items_passed"], v["unsafe_items"], v["coverage_percent"])
        for k, v in json.loads(out).items()
    }
    assert figures == {
        "plain_top_k": (5, 4, 75),
        "post_filter_top_k": (1, 0, 25),
        "compiled": (4, 0, 100),
    }
    code, _, err = run("compare", str(CONTAMINATED), "--top-k", "0")
    assert code == 2 and "--top-k" in err


def test_sweep_prints_each_perturbation_with_its_flips():
    code, out, _ = run("sweep", str(ATLAS), "--weak-class", "case_note", "--json")
    assert code == 0
    result = json.loads(out)
    rows = {r["name"]: r for r in result["perturbations"]}
    assert rows["hide(workflow-E88)"]["slots"]["review_open"] == "unknown"
    assert rows["hide(workflow-E88)"]["flips"]["slots"][0]["proposition"] == "review_open"


def test_schema_describes_input_and_output():
    code, out, _ = run("schema")
    assert code == 0
    schemas = json.loads(out)
    assert set(schemas["input"]["properties"]) == {"request", "contract", "directory", "candidates"}
    assert "slots" in schemas["output"]["properties"]
    assert schemas["input"]["additionalProperties"] is False


@pytest.mark.parametrize("command", ["compile", "sweep"])
def test_module_entry_point_reads_stdin(command):
    proc = subprocess.run(
        [sys.executable, "-m", "compiler_tools", command, "-", "--json"],
        input=ATLAS.read_text(),
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)


# --------------------------------------------------------------------------- bundles


@pytest.fixture
def published(tmp_path):
    """A signed bundle of the Atlas contract, its publisher's and approver's public keys in a
    directory, and a request to compile against it (the input without its contract)."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from compiler_trust import (
        FORMAT,
        KEY_SET_FILE,
        key_set_json,
        public_key_pem,
        serialize_bundle,
        sign_bundle,
    )

    atlas = json.loads(ATLAS.read_text())
    publisher = Ed25519PrivateKey.from_private_bytes(bytes([7]) * 32)
    approver = Ed25519PrivateKey.from_private_bytes(bytes([8]) * 32)
    body = {
        "format": FORMAT,
        "manifest": {
            "decision_type": atlas["contract"]["decision_type"],
            "version": atlas["contract"]["version"],
            "parent_sha256": None,
            "author": "olivia",
            "editors": [{"person": "olivia"}],
            "approvers": [{"person": "rafael"}],
            "published_at": "2026-09-01T10:00:00+00:00",
            "compiler_version": "0.1.0",
        },
        "contract": atlas["contract"],
        "source_classes": [
            {"key": key, "label": key, "authority_tier": 1}
            for key in (
                "facility_record",
                "workflow_event",
                "approved_waiver",
                "committee_record",
                "policy_clause",
            )
        ],
    }
    bundle = sign_bundle(
        body, [("olivia", "publisher", publisher), ("rafael", "approver", approver)]
    )
    path = tmp_path / "atlas.bundle.json"
    path.write_bytes(serialize_bundle(bundle))
    keys = tmp_path / "keys"
    keys.mkdir()
    (keys / "olivia.pem").write_bytes(public_key_pem(publisher))
    (keys / "rafael.pem").write_bytes(public_key_pem(approver))
    kind = atlas["contract"]["decision_type"]
    (keys / KEY_SET_FILE).write_bytes(key_set_json([
        {"person": "olivia", "roles": ["publish"], "publish_types": [kind],
         "public_key": public_key_pem(publisher)},
        {"person": "rafael", "roles": ["approve"], "approve_types": [kind],
         "public_key": public_key_pem(approver)},
    ]))  # fmt: skip
    request = {k: v for k, v in atlas.items() if k != "contract"}
    request_path = tmp_path / "request.json"
    request_path.write_text(json.dumps(request))
    return path, keys, request_path


def test_verify_bundle_accepts_a_signed_bundle_and_refuses_an_altered_one(published):
    path, keys, _ = published
    code, out, _ = run("verify-bundle", str(path), "--public-key", str(keys))
    assert code == 0
    assert out.startswith("valid: credit.review.continuation version 3")

    altered = path.with_name("altered.json")
    altered.write_bytes(path.read_bytes().replace(b'"facility_record"', b'"case_note"', 1))
    code, _, err = run("verify-bundle", str(altered), "--public-key", str(keys))
    assert code == 1
    assert "invalid:" in err


def test_verify_bundle_refuses_unknown_keys_and_bad_key_paths(published, tmp_path):
    path, keys, _ = published
    key_set = json.loads((keys / "keys.json").read_text())
    key_set["keys"] = [k for k in key_set["keys"] if k["person"] != "rafael"]
    (keys / "keys.json").write_text(json.dumps(key_set))
    code, _, err = run("verify-bundle", str(path), "--public-key", str(keys))
    assert code == 1 and "invalid: unknown key" in err
    code, _, err = run("verify-bundle", str(path), "--public-key", str(tmp_path / "nope"))
    assert code == 1 and "invalid:" in err


def test_compile_against_a_bundle_matches_compiling_the_whole_input(published):
    path, keys, request_path = published
    code, out, _ = run(
        "compile", "--bundle", str(path), "--public-key", str(keys), str(request_path)
    )
    assert code == 0
    _, whole, _ = run("compile", str(ATLAS))
    assert json.loads(out) == json.loads(whole)

    code, _, err = run(
        "compile",
        "--bundle",
        str(path),
        "--public-key",
        str(path.with_name("missing-keys")),
        str(request_path),
    )
    assert code == 1 and "bundle refused" in err
    code, _, err = run("compile", "--bundle", str(path), str(request_path))
    assert code == 2 and "--public-key" in err
    code, out, _ = run("compile", "--bundle", str(path), str(request_path), "--json")
    assert code == 2
    assert json.loads(out) == {
        "result": "invalid",
        "errors": [
            {
                "loc": ["--public-key"],
                "msg": "compile --bundle needs --public-key to verify the bundle",
            }
        ],
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[" * 50_000 + "]" * 50_000, "nested more than 64 levels deep at line 1 column 65"),
        ('{"request": 1' + "0" * 5_000 + "}", "more than 100 digits at line 1 column 13"),
        ('{"a": "[[[[",\n "b": ' + "[" * 70 + "]" * 70 + "}", "deep at line 2 column 70"),
    ],
)
def test_documents_that_would_crash_the_parser_are_located_invalid_input(tmp_path, text, message):
    hostile = tmp_path / "hostile.json"
    hostile.write_text(text)
    code, out, _ = run("compile", str(hostile), "--json")
    assert code == 2
    assert message in json.loads(out)["errors"][0]["msg"]


def test_a_byte_that_is_not_utf8_is_located_by_line_and_column(tmp_path):
    latin1 = tmp_path / "latin1.json"
    latin1.write_bytes(b'{\n  "request": "caf\xe9"}')
    code, _, err = run("compile", str(latin1))
    assert code == 2 and "byte 19 cannot be decoded (line 2 column 18)" in err


# --- test --mutate, on a pharmacy's dispensing check ------------------------------------


@pytest.fixture
def pharmacy(tmp_path):
    """A paper script has the same standing as an e-prescription, and the scenario pins only
    the prescription's slot: reversing the two classes survives (no class ranks below the
    other, and no resource id is pinned). The floor on relevance, 0.05, admits everything the
    suite holds (the crowd's lowest context level is 0.05): lowering it is equivalent."""
    only_prescription = {"slots": {"prescription_valid": "supported"}}
    return write_dispense_directory(tmp_path / "rx", expected=only_prescription,
                                    min_relevance=0.05,
                                    source_classes=DISPENSE_CLASSES_ONE_TIER)  # fmt: skip


def test_mutate_reports_each_mutant_with_advice_for_the_surviving_and_the_score(pharmacy):
    code, out, _ = run("test", str(pharmacy), "--mutate")
    assert code == 0  # no minimum: the plain run's exit
    assert "passed: 21 of 21 hold" in out
    assert (
        "killed     weak_class_added:prescription_valid:counter_note: `counter_note`, a weak "
        "class, became accepted for `prescription_valid`\n           by the standard review: "
    ) in out
    reversed_ = "the precedence of `prescription_valid`'s classes was reversed (paper_script, "
    assert (
        f"SURVIVING  precedence_reversed:prescription_valid: {reversed_}e_prescription)\n"
        f"           if {reversed_}e_prescription), no scenario would notice: add a scenario "
        "with one item of each class `prescription_valid` accepts and pin its resource_ids\n"
        "           proposed scenario 'repeat-dispense-precedence-reversed-prescription-valid' "
        "(repeat-dispense (one supporter of each accepted class, the later ones more "
        'relevant)): expected {"slots": {"prescription_valid": "supported", "allergy_clear": '
        '"supported"}, "resource_ids": {"prescription_valid": ["rx-E1"]}}'
    ) in out
    assert "equivalent min_relevance_lowered:policy" in out
    assert out.rstrip().endswith(
        "18 mutants: 16 killed, 1 surviving, 1 equivalent; score 94% (16 of 17 killed)"
    )


@pytest.mark.parametrize(("minimum", "code"), [("0.9", 0), ("94", 0), ("0.95", 1), ("100", 1)])
def test_mutate_exits_1_below_the_minimum_score(pharmacy, minimum, code):
    got, out, _ = run("test", str(pharmacy), "--mutate", "--min-score", minimum)
    assert got == code
    assert ("FAILED: 18 mutants" in out) == (code == 1)


@pytest.mark.parametrize(
    ("argv", "message"),
    [(["--min-score", "0.5"], "--min-score: needs --mutate"),
     (["--mutate", "--min-score", "150"], "150 is not a score")],
)  # fmt: skip
def test_a_minimum_score_needs_mutate_and_a_score(pharmacy, argv, message):
    code, _, err = run("test", str(pharmacy), *argv)
    assert code == 2 and message in err


def test_mutate_writes_one_junit_testcase_per_mutant_and_json_with_the_report(pharmacy, tmp_path):
    import xml.etree.ElementTree as ET

    junit = tmp_path / "junit.xml"
    code, out, _ = run("test", str(pharmacy), "--mutate", "--junit-xml", str(junit), "--json")
    assert code == 0
    suites = {s.get("name"): s for s in ET.parse(junit).getroot().findall("testsuite")}
    assert set(suites) == {"repeat-dispense", "mutation"}
    mutation = suites["mutation"]
    assert (mutation.get("tests"), mutation.get("failures"), mutation.get("skipped")) == (
        "18", "1", "1"
    )  # fmt: skip
    cases = {c.get("name"): c for c in mutation.findall("testcase")}
    failure = cases["precedence_reversed:prescription_valid"].find("failure")
    assert failure.get("message").startswith(
        "if the precedence of `prescription_valid`'s classes was reversed"
    )
    proposal = json.loads(failure.text)  # on the sweep's precedence variant, not its own pool
    assert proposal["pool_from"] is None
    assert proposal["based_on"].startswith("repeat-dispense (")
    assert cases["min_relevance_lowered:policy"].find("skipped") is not None
    assert cases["required_dropped:allergy_clear"].find("failure") is None
    report = json.loads(out)
    assert report["passed"] is True
    assert report["mutation"]["totals"]["surviving"] == 1
    assert report["mutation"]["score"] == pytest.approx(16 / 17)


def test_the_proposed_scenario_added_to_the_directory_kills_its_mutant(pharmacy):
    _, out, _ = run("test", str(pharmacy), "--mutate", "--json")
    (surviving,) = [m for m in json.loads(out)["mutation"]["mutants"] if m["status"] == "surviving"]
    proposal = surviving["proposal"]
    scenario = {"name": proposal["name"], "description": proposal["description"],
                "request": proposal["request"], "directory": proposal["directory"],
                "candidates": proposal["candidates"], "expected": proposal["expected"]}  # fmt: skip
    (pharmacy / "scenarios" / "proposed.json").write_text(json.dumps(scenario))
    code, out, _ = run("test", str(pharmacy), "--mutate", "--min-score", "1.0")
    assert code == 0, out
    assert "killed     precedence_reversed:prescription_valid" in out
    assert "score 100% (17 of 17 killed)" in out
