"""Pins in the contract-test files: the export writes a scenario's pins in the `expected:`
mapping (`evidence-compiler test`'s format), an import reads them back, a file whose pins are
wrong is refused at the preview with its file and field named, and nothing changes.

On a decision type of its own (tests/port_clearance.py): a vessel cleared to berth."""

from __future__ import annotations

import io

import pytest
import yaml
from django.core.management import CommandError, call_command

from scenarios import services
from scenarios.models import Scenario
from tests import port_clearance as port

pytestmark = pytest.mark.django_db

PINS = {
    "expected_admitted": ["cert-C1", "insp-P7", "manifest-M2"],
    "expected_decision_ready": True,
    "expected_blocking": [],
    "expected_required": {"crew_listed": True, "inspection_clear": False},
    "expected_resource_ids": {"hull_certified": ["cert-C1", "insp-P7"]},
}
UNPINNED = {
    "expected_admitted": None,
    "expected_decision_ready": None,
    "expected_blocking": None,
    "expected_required": {},
    "expected_resource_ids": {},
}


@pytest.fixture
def berth(owner, catalogue_manager):
    decision_type = port.make_type(owner=owner, catalogue_manager=catalogue_manager)
    corpus = port.make_corpus(owner=owner, decision_type=decision_type)
    return services.scenario_create(
        actor=owner, decision_type=decision_type, corpus=corpus, name="berth",
        **port.request_fields(**PINS),
    )  # fmt: skip


def export(directory):
    call_command("export_contract_tests", port.KEY, str(directory), stdout=io.StringIO())
    return directory


def plan(directory) -> str:
    out = io.StringIO()
    call_command("import_contract_tests", port.KEY, str(directory), stdout=out)
    return out.getvalue()


def pins_of(scenario):
    scenario.refresh_from_db()
    return {field: getattr(scenario, field) for field in PINS}


def test_the_export_writes_the_pins_as_the_files_state_them(berth, tmp_path):
    directory = export(tmp_path / "suite")
    document = yaml.safe_load((directory / "scenarios" / "berth.yaml").read_text())
    assert document["expected"] == {
        "slots": {"hull_certified": "supported"},
        "admitted": ["cert-C1", "insp-P7", "manifest-M2"],
        "decision_ready": True,
        "blocking": [],
        "required": {"crew_listed": True, "inspection_clear": False},
        "resource_ids": {"hull_certified": ["cert-C1", "insp-P7"]},
    }


def test_the_pins_round_trip_through_the_files(owner, berth, tmp_path):
    directory = export(tmp_path / "suite")
    assert "Unchanged scenario file(s): berth." in plan(directory)
    services.scenario_update(actor=owner, scenario=berth, corpus=berth.corpus, **UNPINNED)
    assert pins_of(berth) == UNPINNED
    text = plan(directory)
    assert "Replaces scenario 'berth'." in text
    sha = text.split("--confirm ")[1].split()[0]
    call_command("import_contract_tests", port.KEY, str(directory), "--confirm", sha,
                 "--as", owner.username, stdout=io.StringIO())  # fmt: skip
    assert pins_of(berth) == PINS


def test_a_file_without_pins_imports_as_not_checked(owner, berth, tmp_path):
    directory = export(tmp_path / "suite")
    path = directory / "scenarios" / "berth.yaml"
    document = yaml.safe_load(path.read_text())
    document["expected"] = {"slots": document["expected"]["slots"]}
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    sha = plan(directory).split("--confirm ")[1].split()[0]
    call_command("import_contract_tests", port.KEY, str(directory), "--confirm", sha,
                 "--as", owner.username, stdout=io.StringIO())  # fmt: skip
    assert pins_of(berth) == UNPINNED


@pytest.mark.parametrize(
    ("pins", "message"),
    [
        (
            {"blocking": ["crew_listed", "pilot_booked"]},
            # The compiler's file format refuses a pin naming no proposition of the contract.
            "berth.yaml: expected.blocking.pilot_booked: not a proposition of the contract",
        ),
        (
            {"resource_ids": {"hull_certified": ["cert-C1", "cert-C1"]}},
            "scenarios/berth.yaml: Resource ids of 'hull_certified': 'cert-C1' is listed twice.",
        ),
        (
            {"required": {"crew_lsited": True}},
            "berth.yaml: expected.required.crew_lsited: not a proposition of the contract",
        ),
    ],
)
def test_a_file_with_a_wrong_pin_is_refused_at_the_preview(berth, tmp_path, pins, message):
    directory = export(tmp_path / "suite")
    path = directory / "scenarios" / "berth.yaml"
    document = yaml.safe_load(path.read_text())
    document["expected"].update(pins)
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    with pytest.raises(CommandError) as caught:
        plan(directory)
    assert str(caught.value).endswith(message)
    assert pins_of(berth) == PINS
    assert Scenario.objects.filter(decision_type=berth.decision_type).count() == 1


def test_a_pin_of_the_wrong_type_is_refused_with_its_file(berth, tmp_path):
    """`decision_ready: "yes"` is not a boolean: the compiler's file format refuses it."""
    directory = export(tmp_path / "suite")
    path = directory / "scenarios" / "berth.yaml"
    document = yaml.safe_load(path.read_text())
    document["expected"]["decision_ready"] = "maybe"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    with pytest.raises(CommandError, match=r"berth\.yaml.*decision_ready"):
        plan(directory)
    assert pins_of(berth) == PINS
