"""`evidence-compiler test DIR|BUNDLE` (compiler_tools._contract_tests): the test directory format,
its exit codes (0 hold, 1 a failure, 2 invalid files, every problem located), JUnit XML and
the JSON report."""

from __future__ import annotations

import builtins
import io
import json
import shutil
import xml.etree.ElementTree as ET

import pytest
import yaml
from atlas_bundle import ROOT, atlas_bundle, atlas_scenario, key_set
from mutation_fixtures import write_dispense_directory

from compiler_tools import NEEDS_YAML, ScenarioFile, file_schemas, main

EXAMPLE = ROOT / "examples" / "tests" / "credit.review.continuation"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["test", *map(str, argv)], out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def directory(tmp_path):
    target = tmp_path / "credit"
    shutil.copytree(EXAMPLE, target)
    return target


def edit(path, change) -> None:
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def test_the_example_directory_holds_and_writes_junit_xml(directory, tmp_path):
    junit = tmp_path / "junit.xml"
    code, out, err = run(directory, "--junit-xml", junit)
    assert code == 0, out + err
    assert "ok   atlas-base: compiled, 4 expectations" in out
    root = ET.parse(junit).getroot()
    (suite,) = root.findall("testsuite")
    assert suite.get("name") == "atlas-base" and suite.get("failures") == "0"
    names = [case.get("name") for case in suite.findall("testcase")]
    assert "slot waiver_valid is unknown" in names
    assert "shift_days(+1)" in names and "contaminate(50)" in names
    assert "swap_principal(outsider, outsider_role)" in names
    hidden = next(c for c in suite.findall("testcase") if c.get("name").startswith("hide("))
    assert json.loads(hidden.find("system-out").text)  # its flips


def test_a_wrong_expectation_fails_with_exit_1_naming_slot_and_states(directory, tmp_path):
    def expect_waiver(data):
        data["expected"]["slots"]["waiver_valid"] = "supported"
        data["variants"][0]["expected"]["slots"]["facility_limit"] = "supported"

    edit(directory / "scenarios" / "atlas-base.yaml", expect_waiver)
    junit = tmp_path / "junit.xml"
    code, out, _ = run(directory, "--junit-xml", junit)
    assert code == 1
    assert "FAIL atlas-base" in out
    assert "slot waiver_valid: expected supported, got unknown" in out
    assert (
        "swap_principal(outsider, outsider_role): slot facility_limit: expected supported, "
        "got unknown" in out
    )
    cases = ET.parse(junit).iter("testcase")
    failed = [c.get("name") for c in cases if c.find("failure") is not None]
    assert failed == ["slot waiver_valid is supported", "swap_principal(outsider, outsider_role)"]


def test_a_relation_violation_fails_the_run_and_names_its_perturbation(directory, tmp_path):
    """The demo's version 2 lets a case note (a weak class) establish `waiver_valid`: the
    weak-promotion relation is broken, which fails the run even though no expectation in the
    files mentions that perturbation."""

    def accept_case_notes(data):
        waiver = next(p for p in data["contract"]["propositions"] if p["key"] == "waiver_valid")
        waiver["accepted_classes"] = ["approved_waiver", "case_note"]

    edit(directory / "contract.yaml", accept_case_notes)
    junit = tmp_path / "junit.xml"
    code, out, _ = run(directory, "--junit-xml", junit)
    assert code == 1
    assert "violation: waiver_valid accepts a weak class as proof" in out
    cases = ET.parse(junit).iter("testcase")
    failed = [c.get("name") for c in cases if c.find("failure") is not None]
    assert "promote_weak(case_note)" in failed


def test_admitted_and_rejected_ids_are_checked_when_given(directory):
    def expect_ids(data):
        data["expected"]["admitted"] = ["facility-F102"]

    edit(directory / "scenarios" / "atlas-base.yaml", expect_ids)
    code, out, _ = run(directory, "--json")
    assert code == 1
    report = json.loads(out)
    (check,) = [c for c in report["scenarios"][0]["cases"] if c["name"] == "admitted ids"]
    assert check["failures"][0].startswith("admitted: admitted but not expected: ")


def test_invalid_files_exit_2_listing_every_problem_with_file_and_location(directory):
    def break_scenario(data):
        data["expected"]["slots"]["no_such_slot"] = "unknown"
        data["request"]["token_budget"] = -1
        data["variants"][0]["perturbation"] = {"operator": "teleport"}

    edit(directory / "scenarios" / "atlas-base.yaml", break_scenario)
    edit(directory / "corpora" / "atlas.yaml",
         lambda data: data["candidates"][0].update(relevance=3))  # fmt: skip
    (directory / "scenarios" / "broken.yaml").write_text("name: [unclosed\n")
    code, out, err = run(directory, "--json")
    assert code == 2
    errors = json.loads(out)["errors"]
    located = {(e["file"].split("credit/")[1], tuple(e["loc"])) for e in errors}
    assert located >= {
        ("scenarios/atlas-base.yaml", ("expected", "slots", "no_such_slot")),
        ("scenarios/atlas-base.yaml", ("request", "token_budget")),
        ("scenarios/atlas-base.yaml", ("variants", 0, "perturbation")),
        ("corpora/atlas.yaml", ("candidates", 0, "relevance")),
        ("scenarios/broken.yaml", ()),
    }
    assert any("not valid YAML" in e["msg"] and "line 2" in e["msg"] for e in errors)
    code, _, err = run(directory)
    assert code == 2 and "scenarios/atlas-base.yaml: expected.slots.no_such_slot" in err


def test_a_perturbation_of_a_candidate_the_corpus_lacks_is_an_invalid_file(directory):
    def hide_unknown(data):
        data["variants"][0]["perturbation"] = {"operator": "hide", "args": {"candidate_id": "x"}}

    edit(directory / "scenarios" / "atlas-base.yaml", hide_unknown)
    code, out, _ = run(directory, "--json")
    assert code == 2
    (error,) = json.loads(out)["errors"]
    assert error["loc"] == ["variants", 0, "perturbation"] and "no candidate 'x'" in error["msg"]


def test_a_scenario_names_a_corpus_or_carries_one_not_both(directory):
    edit(directory / "scenarios" / "atlas-base.yaml", lambda data: data.update(candidates=[]))
    code, out, _ = run(directory, "--json")
    assert code == 2
    assert "either `corpus`" in json.loads(out)["errors"][0]["msg"]
    code, _, err = run(directory.parent / "nothing-here")
    assert code == 2 and "no such test directory" in err


def test_json_files_need_no_yaml_and_yaml_without_pyyaml_is_a_clear_error(directory, monkeypatch):
    for path in directory.rglob("*.yaml"):
        path.with_suffix(".json").write_text(json.dumps(yaml.safe_load(path.read_text())))
        path.unlink()
    real_import = builtins.__import__

    def no_yaml(name, *args, **kwargs):
        if name == "yaml":
            raise ImportError("No module named 'yaml'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_yaml)
    assert run(directory)[0] == 0
    (directory / "scenarios" / "extra.yaml").write_text("name: extra\n")
    code, _, err = run(directory)
    assert code == 2 and NEEDS_YAML in err


def test_a_bundle_runs_its_own_scenarios_verified_when_keys_are_given(tmp_path):
    path = tmp_path / "b.json"
    failing = atlas_scenario("expects-a-waiver", slots={"waiver_valid": "supported"})
    path.write_bytes(atlas_bundle(scenarios=[atlas_scenario(), failing]))
    keys = key_set(tmp_path / "keys")
    code, out, _ = run(path, "--public-key", keys)
    assert code == 1
    assert "ok   atlas-base" in out and "FAIL expects-a-waiver" in out
    tampered = tmp_path / "t.json"
    tampered.write_bytes(path.read_bytes().replace(b'"maya"', b'"mark"', 1))
    code, _, err = run(tampered, "--public-key", keys)
    assert code == 2 and "not a usable bundle" in err and "altered" in err


def test_schema_tests_publishes_the_three_file_schemas():
    out = io.StringIO()
    assert main(["schema", "--tests"], out, io.StringIO()) == 0
    schemas = json.loads(out.getvalue())
    assert schemas == json.loads(json.dumps(file_schemas()))
    assert set(schemas) == {"contract", "scenario", "corpus"}
    assert schemas["scenario"]["title"] == ScenarioFile.__name__
    assert "expected" in schemas["scenario"]["required"]


# --- Pinned meaning, and the catalogue, on a pharmacy's dispensing check ----------------


@pytest.fixture
def pharmacy(tmp_path):
    return write_dispense_directory(tmp_path / "rx")


PINNED = {
    "slots": {"prescription_valid": "supported", "allergy_clear": "supported"},
    "decision_ready": True,
    "blocking": [],
    "required": {"prescription_valid": True},
    "resource_ids": {"prescription_valid": ["rx-E1"], "allergy_clear": ["allergy-R1"]},
}


def test_decision_ready_blocking_required_and_resource_ids_hold_when_pinned(pharmacy, tmp_path):
    edit(pharmacy / "scenarios" / "repeat-dispense.yaml",
         lambda data: data.update(expected=PINNED))  # fmt: skip
    junit = tmp_path / "junit.xml"
    code, out, err = run(pharmacy, "--junit-xml", junit)
    assert code == 0, out + err
    names = [c.get("name") for c in ET.parse(junit).iter("testcase")]
    assert names[:7] == [
        "slot prescription_valid is supported", "slot allergy_clear is supported",
        "decision_ready is true", "blocking propositions", "slot prescription_valid required "
        "is true", "slot prescription_valid resource ids", "slot allergy_clear resource ids",
    ]  # fmt: skip


def test_each_pinned_field_that_does_not_hold_fails_with_what_it_expected_and_got(pharmacy):
    """A counter note ("the doctor phoned it in") must not stand in for the prescription:
    pinned the wrong way round, every field says what it expected and what it got."""
    wrong = {
        "slots": {"prescription_valid": "supported"},
        "decision_ready": False,
        "blocking": ["allergy_clear"],
        "required": {"prescription_valid": False},
        "resource_ids": {"prescription_valid": ["counter-K1"]},
    }
    edit(pharmacy / "scenarios" / "repeat-dispense.yaml",
         lambda data: data.update(expected=wrong))  # fmt: skip
    code, out, _ = run(pharmacy)
    assert code == 1
    for message in (
        "decision_ready is false: decision_ready: expected false, got true",
        "blocking propositions: blocking: expected [allergy_clear], got []",
        "slot prescription_valid required is false: slot prescription_valid required: "
        "expected false, got true",
        "slot prescription_valid resource ids: slot prescription_valid resource_ids: "
        "expected [counter-K1], got [rx-E1]",
    ):
        assert message in out
    assert "FAILED: 21 of 25 hold" in out  # 5 expectations, 4 fail; 20 perturbations hold


def test_a_variant_can_pin_that_the_decision_is_no_longer_ready(pharmacy):
    def hide_allergy_register(data):
        data["variants"] = [{
            "perturbation": {"operator": "hide", "args": {"candidate_id": "allergy-R1"}},
            "expected": {"slots": {"allergy_clear": "unknown"}, "decision_ready": True,
                         "blocking": ["allergy_clear"]},
        }]  # fmt: skip

    edit(pharmacy / "scenarios" / "repeat-dispense.yaml", hide_allergy_register)
    code, out, _ = run(pharmacy)
    assert code == 1
    assert "hide(allergy-R1): decision_ready: expected true, got false" in out
    assert "blocking: expected [allergy_clear]" not in out  # that one holds


def test_pins_must_name_propositions_of_the_contract(pharmacy):
    def name_unknown(data):
        data["expected"].update(blocking=["refill_due"], required={"refill_due": True},
                                resource_ids={"dose_checked": []})  # fmt: skip

    edit(pharmacy / "scenarios" / "repeat-dispense.yaml", name_unknown)
    code, out, _ = run(pharmacy, "--json")
    assert code == 2
    located = {tuple(e["loc"]) for e in json.loads(out)["errors"]}
    assert located == {("expected", "blocking", "refill_due"),
                       ("expected", "required", "refill_due"),
                       ("expected", "resource_ids", "dose_checked")}  # fmt: skip


def test_an_accepted_class_outside_the_directorys_catalogue_is_an_error(pharmacy):
    def accept_counter_summary(data):
        data["contract"]["propositions"][1]["accepted_classes"].append("ai_summary")

    edit(pharmacy / "contract.yaml", accept_counter_summary)
    code, out, err = run(pharmacy)
    assert code == 2
    assert (
        "contract.yaml: contract.propositions[1].accepted_classes[1]: proposition "
        "'allergy_clear' accepts 'ai_summary', which is not in the source-class catalogue"
    ) in err
    # loading reports it without refusing (the workbench's importer checks its own catalogue)
    from compiler_tools import load_tests

    (problem,) = load_tests(pharmacy).outside_catalogue
    assert problem["loc"] == ["contract", "propositions", 1, "accepted_classes", 1]
    # without a catalogue there is nothing to check against
    edit(pharmacy / "contract.yaml", lambda data: data.update(source_classes=[]))
    assert run(pharmacy)[0] == 0


def test_authority_tiers_are_numbers_or_their_names(pharmacy):
    from compiler_tools import load_tests

    tests = load_tests(pharmacy)
    assert tests.catalogue == {"e_prescription": 1, "paper_script": 3, "allergy_register": 1,
                               "counter_note": 4}  # fmt: skip
    edit(pharmacy / "contract.yaml",
         lambda data: data["source_classes"][0].update(authority_tier="gospel"))  # fmt: skip
    code, out, _ = run(pharmacy, "--json")
    assert code == 2
    (error,) = json.loads(out)["errors"]
    assert error["loc"] == ["source_classes", 0, "authority_tier"]
    assert "system_of_record" in error["msg"] and "'gospel'" in error["msg"]


def test_schema_tests_shows_the_pinned_fields():
    out = io.StringIO()
    main(["schema", "--tests"], out, io.StringIO())
    expected = json.loads(out.getvalue())["scenario"]["$defs"]["Expected"]["properties"]
    assert {"decision_ready", "blocking", "required", "resource_ids"} <= set(expected)
