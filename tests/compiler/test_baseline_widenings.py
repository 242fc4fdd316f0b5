"""`evidence-compiler test DIR --baseline OLD [--fail-on-widening]`: every widening of the
contract under test against an older contract read from a bundle, a test directory or a
contract file; listed without changing the exit code unless `--fail-on-widening`. On a vendor
onboarding test directory (a supplier's due diligence before its first purchase order)."""

from __future__ import annotations

import copy
import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml
from atlas_bundle import APPROVER, PUBLISHER, key_set

from compiler_tools import main
from compiler_trust import FORMAT_2, serialize_bundle, sign_bundle

CONTRACT: dict[str, Any] = {
    "decision_type": "vendor.onboarding",
    "version": "4",
    "purposes": ["vendor_onboarding"],
    "propositions": [
        {
            "key": "tax_registration_valid",
            "accepted_classes": ["tax_authority_record", "registration_certificate"],
        },
        {"key": "insurance_in_force", "accepted_classes": ["insurer_certificate"]},
        {"key": "sanctions_clear", "accepted_classes": ["screening_result"]},
    ],
    "policy": {"min_relevance": 0.3},
}


def candidate(id_: str, cls: str, supports: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": id_,
        "entity": "V-KESTREL",
        "allowed_roles": ["procurement_officer"],
        "allowed_purposes": ["vendor_onboarding"],
        "evidence_class": cls,
        "supports": [supports],
        "valid_from": "2026-01-01",
        "tokens": 60,
        "relevance": 0.8,
        "content": f"{cls} for Kestrel Supplies",
        **extra,
    }


SCENARIO = {
    "name": "kestrel-first-order",
    "request": {
        "decision_type": "vendor.onboarding",
        "principal": "priya",
        "roles": ["procurement_officer"],
        "purpose": "vendor_onboarding",
        "entity": "Kestrel Supplies",
        "decision_date": "2026-10-05",
        "token_budget": 600,
    },
    "directory": {"entities": {"V-KESTREL": ["Kestrel Supplies"]}},
    "candidates": [
        candidate("TAX-7", "tax_authority_record", "tax_registration_valid"),
        candidate("INS-2", "insurer_certificate", "insurance_in_force"),
        candidate("SCR-9", "screening_result", "sanctions_clear"),
    ],
    "expected": {
        "slots": {
            "tax_registration_valid": "supported",
            "insurance_in_force": "supported",
            "sanctions_clear": "supported",
        }
    },
}


def with_changes(contract: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """A copy with top-level fields replaced and propositions edited by key (`key=None`
    removes one; other values update its fields)."""
    changed = copy.deepcopy(contract)
    for key, value in fields.items():
        found = next((p for p in changed["propositions"] if p["key"] == key), None)
        if found is None:
            changed[key] = value
        elif value is None:
            changed["propositions"].remove(found)
        else:
            found.update(value)
    return changed


def write_directory(root: Path, contract: dict[str, Any]) -> Path:
    (root / "scenarios").mkdir(parents=True)
    header = {"format": "evidence-compiler.tests/1", "contract": contract}
    (root / "contract.yaml").write_text(yaml.safe_dump(header, sort_keys=False))
    (root / "scenarios" / "kestrel.json").write_text(json.dumps(SCENARIO))
    return root


# The version under test, against a baseline (version 3) that did not accept registration
# certificates before tax records, required sanctions screening and served no analytics.
NEW = with_changes(
    CONTRACT,
    purposes=["vendor_onboarding", "spend_analytics"],
    tax_registration_valid={
        "accepted_classes": ["registration_certificate", "tax_authority_record"]
    },
    insurance_in_force={"accepted_classes": ["insurer_certificate", "broker_letter"]},
)
OLD = with_changes(CONTRACT, version="3", tax_registration_valid={"required": True})
EXPECTED_IDS = [
    "class_added:insurance_in_force:broker_letter",
    "purpose_added:spend_analytics",
    "precedence_changed:tax_registration_valid:registration_certificate",
]


def run(*argv: Any) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["test", *map(str, argv)], out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def tests_dir(tmp_path: Path) -> Path:
    return write_directory(tmp_path / "new", NEW)


def test_the_directory_holds_on_its_own(tests_dir: Path) -> None:
    code, out, err = run(tests_dir)
    assert code == 0, out + err
    assert "widening" not in out


@pytest.mark.parametrize("shape", ["test directory", "contract.yaml", "bare contract JSON"])
def test_widenings_against_a_baseline_are_listed_and_do_not_fail(
    tests_dir: Path, tmp_path: Path, shape: str
) -> None:
    if shape == "test directory":
        baseline = write_directory(tmp_path / "old", OLD)
    elif shape == "contract.yaml":
        baseline = write_directory(tmp_path / "old", OLD) / "contract.yaml"
    else:
        baseline = tmp_path / "old.json"
        baseline.write_text(json.dumps(OLD))
    code, out, err = run(tests_dir, "--baseline", baseline)
    assert code == 0, out + err
    assert f"3 widening(s) of version 4 against version 3 ({baseline}):" in out
    listed = [line.split(":", 3) for line in out.splitlines() if line.startswith("     ")]
    assert [":".join(parts[:-1]).strip() for parts in listed] == EXPECTED_IDS
    assert "'insurance_in_force' may now be established by 'broker_letter'" in out
    assert "the purpose 'spend_analytics'" in out


def test_fail_on_widening_exits_1_and_junit_lists_each_widening(
    tests_dir: Path, tmp_path: Path
) -> None:
    baseline = tmp_path / "old.json"
    baseline.write_text(json.dumps(OLD))
    junit = tmp_path / "junit.xml"
    code, out, _ = run(tests_dir, "--baseline", baseline, "--fail-on-widening",
                       "--junit-xml", junit)  # fmt: skip
    assert code == 1
    assert "FAIL purpose_added:spend_analytics: The contract may now be used" in out
    suites = ET.parse(junit).getroot().findall("testsuite")
    assert [s.get("name") for s in suites] == [
        "kestrel-first-order", "widenings against version 3"
    ]  # fmt: skip
    widened = suites[1]
    assert widened.get("failures") == "3"
    assert [c.get("name") for c in widened.findall("testcase")] == EXPECTED_IDS
    assert all(c.find("failure") is not None for c in widened.findall("testcase"))


def test_json_report_carries_the_widenings(tests_dir: Path, tmp_path: Path) -> None:
    baseline = tmp_path / "old.json"
    baseline.write_text(json.dumps(OLD))
    code, out, _ = run(tests_dir, "--baseline", baseline, "--json")
    assert code == 0
    report = json.loads(out)
    assert report["passed"] is True
    assert report["baseline"]["origin"] == str(baseline)
    assert report["baseline"]["version"] == "3" and report["baseline"]["failed"] is False
    assert [w["id"] for w in report["baseline"]["widenings"]] == EXPECTED_IDS
    assert report["baseline"]["widenings"][0] == {
        "kind": "class_added",
        "proposition": "insurance_in_force",
        "detail": "'insurance_in_force' may now be established by 'broker_letter', which the "
        "baseline did not accept for it (choice 2 of 2).",
        "id": "class_added:insurance_in_force:broker_letter",
    }
    code, out, _ = run(tests_dir, "--baseline", baseline, "--json", "--fail-on-widening")
    assert code == 1
    assert json.loads(out)["passed"] is False


def test_no_widening_against_a_wider_baseline(tests_dir: Path, tmp_path: Path) -> None:
    wider = with_changes(NEW, version="3", purposes=["vendor_onboarding", "spend_analytics", "x"])
    baseline = tmp_path / "old.json"
    baseline.write_text(json.dumps(wider))
    code, out, _ = run(tests_dir, "--baseline", baseline, "--fail-on-widening")
    assert code == 0
    assert "no widening of version 4 against version 3" in out


def test_a_bundle_baseline_is_read_as_test_reads_a_bundle(tests_dir: Path, tmp_path: Path) -> None:
    scenario = {k: SCENARIO[k] for k in ("name", "request", "expected")}
    scenario["corpus"] = {"directory": SCENARIO["directory"], "candidates": SCENARIO["candidates"]}
    classes = sorted({c for p in OLD["propositions"] for c in p["accepted_classes"]})
    body = {
        "format": FORMAT_2,  # a bundle published before the scenarios moved out
        "manifest": {
            "decision_type": "vendor.onboarding", "version": "3", "parent_sha256": None,
            "author": "olivia", "editors": [{"person": "olivia"}],
            "approvers": [{"person": "rafael"}], "published_at": "2026-09-01T10:00:00+00:00",
            "compiler_version": "0.1.0",
        },
        "contract": OLD,
        "source_classes": [{"key": c, "label": c, "authority_tier": 1} for c in classes],
        "scenarios": [scenario],
    }  # fmt: skip
    signed = sign_bundle(
        body, [("olivia", "publisher", PUBLISHER), ("rafael", "approver", APPROVER)]
    )
    bundle = tmp_path / "published.bundle"  # not .json: read by its content
    bundle.write_bytes(serialize_bundle(signed))
    keys = key_set(tmp_path / "keys", OLD["decision_type"])
    for extra in ([], ["--public-key", keys]):
        code, out, err = run(tests_dir, "--baseline", bundle, *extra)
        assert code == 0, out + err
        assert "3 widening(s) of version 4 against version 3" in out
    tampered = tmp_path / "tampered.json"
    tampered.write_bytes(bundle.read_bytes().replace(b'"priya"', b'"pablo"', 1))
    code, _, err = run(tests_dir, "--baseline", tampered)
    assert code == 2 and "not a usable bundle" in err and "altered" in err


def test_bad_baselines_exit_2_saying_what_is_wrong(tests_dir: Path, tmp_path: Path) -> None:
    code, _, err = run(tests_dir, "--baseline", tmp_path / "missing")
    assert code == 2 and "no such baseline bundle, directory or file" in err

    other = tmp_path / "other.json"
    other.write_text(json.dumps(with_changes(OLD, decision_type="vendor.offboarding")))
    code, _, err = run(tests_dir, "--baseline", other)
    assert code == 2
    assert "decision type 'vendor.offboarding', the tests' for 'vendor.onboarding'" in err

    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(with_changes(OLD, purposes="vendor_onboarding")))
    code, _, err = run(tests_dir, "--baseline", broken)
    assert code == 2 and f"{broken}: purposes:" in err

    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = run(tests_dir, "--baseline", empty)
    assert code == 2 and "no contract.yaml (or .json)" in err

    code, _, err = run(tests_dir, "--fail-on-widening")
    assert code == 2 and "--fail-on-widening needs --baseline" in err


def test_python_m_compiler_takes_the_same_options(tests_dir: Path, tmp_path: Path) -> None:
    import subprocess
    import sys

    baseline = tmp_path / "old.json"
    baseline.write_text(json.dumps(OLD))
    done = subprocess.run(
        [sys.executable, "-m", "compiler_tools", "test", str(tests_dir),
         "--baseline", str(baseline), "--fail-on-widening"],
        capture_output=True, text=True, cwd=Path(__file__).resolve().parents[2], check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "3 widening(s)" in done.stdout


def test_with_mutate_the_widenings_are_still_listed_and_can_fail(
    tests_dir: Path, tmp_path: Path
) -> None:
    baseline = tmp_path / "old.json"
    baseline.write_text(json.dumps(OLD))
    code, out, _ = run(tests_dir, "--baseline", baseline, "--mutate", "--json")
    report = json.loads(out)
    assert "mutation" in report
    assert [w["id"] for w in report["baseline"]["widenings"]] == EXPECTED_IDS
    assert code == 0 and report["passed"] is True  # listed, not failing
    code, out, _ = run(tests_dir, "--baseline", baseline, "--mutate", "--fail-on-widening")
    assert code == 1
    assert "FAIL purpose_added:spend_analytics" in out
