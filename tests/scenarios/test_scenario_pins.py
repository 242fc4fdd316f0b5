"""Pins on the output's meaning: a scenario states decision_ready, the blocking set, a slot's
`required` flag and its resource ids, and the admitted set; a run fails on each that does
not hold, in plain words; bad pins are refused with the field named and nothing saved.

On a decision type of its own (tests/port_clearance.py): a vessel cleared to berth."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from scenarios import expectations, selectors, services
from scenarios.models import Scenario
from tests import port_clearance as port

pytestmark = pytest.mark.django_db


@pytest.fixture
def port_type(owner, catalogue_manager):
    return port.make_type(owner=owner, catalogue_manager=catalogue_manager)


@pytest.fixture
def aurora(owner, port_type):
    return port.make_corpus(owner=owner, decision_type=port_type)


@pytest.fixture
def no_manifest(owner, port_type):
    """The vessel's file without its crew manifest: only the agent's message claims the crew
    is listed, so the required `crew_listed` is unknown and blocks the decision."""
    pool = [c for c in port.POOL if c["id"] != "manifest-M2"]
    return port.make_corpus(owner=owner, decision_type=port_type, name="no manifest", pool=pool)


@pytest.fixture
def port_draft(port_type):
    return selectors.version_for(decision_type=port_type, number=None)


def create(owner, port_type, corpus, name="berth", **changes):
    return services.scenario_create(
        actor=owner,
        decision_type=port_type,
        corpus=corpus,
        name=name,
        **port.request_fields(**changes),
    )


def base_failures(run):
    return run.results.get(perturbation="").expectation_failures


def test_the_pins_are_stored_as_given(owner, port_type, aurora):
    scenario = create(
        owner, port_type, aurora,
        expected_decision_ready=True,
        expected_blocking=[],
        expected_required={"crew_listed": True, "inspection_clear": False},
        expected_resource_ids={"hull_certified": ["cert-C1", "insp-P7"]},
    )  # fmt: skip
    scenario.refresh_from_db()
    assert scenario.expected_decision_ready is True
    assert scenario.expected_blocking == []  # checked: nothing may block
    assert scenario.expected_required == {"crew_listed": True, "inspection_clear": False}
    assert scenario.expected_resource_ids == {"hull_certified": ["cert-C1", "insp-P7"]}
    unpinned = create(owner, port_type, aurora, name="plain")
    assert (unpinned.expected_decision_ready, unpinned.expected_blocking) == (None, None)
    assert (unpinned.expected_required, unpinned.expected_resource_ids) == ({}, {})


@pytest.mark.parametrize(
    ("pins", "field", "message"),
    [
        (
            {"expected_decision_ready": "yes"},
            "expected_decision_ready",
            'Decision ready: give true, false or nothing (not checked), not "yes".',
        ),
        (
            {"expected_blocking": "crew_listed"},
            "expected_blocking",
            'Blocking propositions: give a list of proposition keys, not "crew_listed".',
        ),
        (
            {"expected_blocking": ["crew_listed", "pilot_booked"]},
            "expected_blocking",
            "Blocking propositions: 'pilot_booked' is not a proposition of any version of "
            "this decision type.",
        ),
        (
            {"expected_blocking": ["crew_listed", "crew_listed"]},
            "expected_blocking",
            "Blocking propositions: 'crew_listed' is listed twice.",
        ),
        (
            {"expected_required": {"crew_listed": "yes"}},
            "expected_required",
            "Required of 'crew_listed': give true (required) or false (optional), not \"yes\".",
        ),
        (
            {"expected_required": {"crew_lsited": True}},
            "expected_required",
            "Required: 'crew_lsited' is not a proposition of any version of this decision type.",
        ),
        (
            {"expected_required": ["crew_listed"]},
            "expected_required",
            "Required: give a mapping from each proposition to true (required) or false "
            '(optional), not ["crew_listed"].',
        ),
        (
            {"expected_resource_ids": {"hull_certified": "cert-C1"}},
            "expected_resource_ids",
            "Resource ids of 'hull_certified': give a list of candidate ids, not \"cert-C1\".",
        ),
        (
            {"expected_resource_ids": {"hull_certified": ["cert-C1", "cert-C1"]}},
            "expected_resource_ids",
            "Resource ids of 'hull_certified': 'cert-C1' is listed twice.",
        ),
        (
            {"expected_resource_ids": {"hull_certified": ["cert-C1", 7]}},
            "expected_resource_ids",
            "Resource ids of 'hull_certified': 7 is not a candidate id: give its key as text.",
        ),
        (
            {"expected_resource_ids": {"hull_certified": [" "]}},
            "expected_resource_ids",
            "Resource ids of 'hull_certified': an empty candidate id.",
        ),
    ],
)
def test_a_bad_pin_is_refused_naming_the_field_and_nothing_is_saved(
    owner, port_type, aurora, pins, field, message
):
    with pytest.raises(ValidationError) as caught:
        create(owner, port_type, aurora, **pins)
    assert caught.value.message_dict == {field: [message]}
    assert not Scenario.objects.filter(decision_type=port_type).exists()


def test_a_bad_pin_in_an_update_changes_nothing(owner, port_type, aurora):
    scenario = create(owner, port_type, aurora, expected_blocking=["crew_listed"])
    with pytest.raises(ValidationError) as caught:
        services.scenario_update(
            actor=owner, scenario=scenario, corpus=aurora, description="changed",
            expected_blocking=["crew_listed"], expected_decision_ready=1,
        )  # fmt: skip
    assert list(caught.value.message_dict) == ["expected_decision_ready"]
    scenario.refresh_from_db()
    assert (scenario.description, scenario.lock_version) == ("", 0)


def test_pins_that_hold_fail_nothing(owner, port_type, port_draft, aurora):
    create(
        owner, port_type, aurora,
        expected_admitted=["cert-C1", "insp-P7", "manifest-M2"],
        expected_decision_ready=True,
        expected_blocking=[],
        expected_required={"hull_certified": True, "inspection_clear": False},
        expected_resource_ids={"hull_certified": ["cert-C1", "insp-P7"],
                               "crew_listed": ["manifest-M2"]},
    )  # fmt: skip
    run = services.run_start(actor=owner, version=port_draft)
    assert base_failures(run) == []
    assert run.summary["failures"] == 0


def test_a_pinned_decision_ready_that_fails_fails_the_run(
    owner, port_type, port_draft, no_manifest
):
    create(owner, port_type, no_manifest, expected_decision_ready=True)
    run = services.run_start(actor=owner, version=port_draft)
    (failure,) = base_failures(run)
    assert (failure["what"], failure["expected"], failure["actual"]) == (
        "decision_ready",
        True,
        False,
    )
    assert run.summary["failures"] == 1
    assert expectations.failure_text(failure) == "The decision should be ready; it is not ready."


def test_a_blocking_pin_fails_with_what_blocks(owner, port_type, port_draft, no_manifest):
    create(owner, port_type, no_manifest, expected_blocking=["hull_certified"])
    run = services.run_start(actor=owner, version=port_draft)
    (failure,) = base_failures(run)
    assert failure["what"] == "blocking"
    assert expectations.failure_text(failure) == (
        "Exactly 'hull_certified' should block the decision; blocking: 'crew_listed' "
        "('crew_listed' not expected; 'hull_certified' missing)."
    )
    assert run.summary["failures"] == 1


def test_resource_ids_are_checked_in_order(owner, port_type, port_draft, aurora):
    """Precedence: the certificate is accepted before the inspection, so it comes first."""
    create(
        owner, port_type, aurora, name="reversed",
        expected_resource_ids={"hull_certified": ["insp-P7", "cert-C1"]},
    )  # fmt: skip
    create(
        owner, port_type, aurora, name="in order",
        expected_resource_ids={"hull_certified": ["cert-C1", "insp-P7"]},
    )  # fmt: skip
    run = services.run_start(actor=owner, version=port_draft)
    by_name = {r.scenario_name: r.expectation_failures for r in run.results.filter(perturbation="")}
    assert by_name["in order"] == []
    (failure,) = by_name["reversed"]
    assert (failure["what"], failure["key"]) == ("resource_ids", "hull_certified")
    assert expectations.failure_text(failure) == (
        "'hull_certified' should rest on 'insp-P7' and 'cert-C1', in that order; it rests on "
        "'cert-C1' and 'insp-P7'."
    )
    assert run.summary["failures"] == 1


def test_a_required_pin_fails_when_the_flag_differs(owner, port_type, port_draft, aurora):
    create(owner, port_type, aurora, expected_required={"inspection_clear": True})
    run = services.run_start(actor=owner, version=port_draft)
    (failure,) = base_failures(run)
    assert expectations.failure_text(failure) == (
        "'inspection_clear' should be required; it is optional."
    )


def test_the_admitted_set_fails_naming_what_differs(owner, port_type, port_draft, aurora):
    create(owner, port_type, aurora, expected_admitted=["cert-C1", "manifest-M2", "agent-A1"])
    run = services.run_start(actor=owner, version=port_draft)
    (failure,) = base_failures(run)
    assert expectations.failure_text(failure) == (
        "Exactly 'agent-A1', 'cert-C1' and 'manifest-M2' should be admitted; admitted: "
        "'cert-C1', 'insp-P7' and 'manifest-M2' ('insp-P7' not expected; 'agent-A1' missing)."
    )


def test_the_command_prints_each_failure_in_words_and_exits_1(
    owner, port_type, no_manifest, capsys
):
    from django.core.management import call_command

    create(owner, port_type, no_manifest, expected_decision_ready=True)
    with pytest.raises(SystemExit) as exited:
        call_command("run_scenarios", port.KEY)
    assert exited.value.code == 1
    out = capsys.readouterr().out
    assert "FAIL berth: The decision should be ready; it is not ready." in out


def test_taking_the_result_as_expected_updates_only_the_pins_checked(
    owner, port_type, port_draft, no_manifest
):
    scenario = create(
        owner, port_type, no_manifest,
        expected_decision_ready=True,
        expected_resource_ids={"crew_listed": ["manifest-M2"]},
    )  # fmt: skip
    preview = selectors.expectation_preview(scenario=scenario, version=port_draft)
    changes = {(c.field, c.key): (c.before_text, c.after_text) for c in preview.changes}
    assert changes[("decision_ready", "decision_ready")] == ("ready", "not ready")
    assert changes[("resource_ids", "crew_listed")] == ("manifest-M2", "nothing")
    assert not any(field in ("blocking", "required") for field, _ in changes)
    services.scenario_take_expected(
        actor=owner, scenario=scenario, expectations=preview.expectations, version=port_draft
    )
    scenario.refresh_from_db()
    assert scenario.expected_decision_ready is False
    assert scenario.expected_resource_ids == {"crew_listed": []}
    assert scenario.expected_blocking is None and scenario.expected_required == {}
    assert selectors.expectation_preview(scenario=scenario, version=port_draft).changes == []
    run = services.run_start(actor=owner, version=port_draft)
    assert base_failures(run) == []


def test_a_failure_of_a_row_stored_before_the_pins_still_reads(owner):
    """Rows a run stored before the pins hold only slot, admitted, rejected and input
    failures, some naming a perturbation: each still reads in words."""
    stored = [
        {"what": "slot", "key": "hull_certified", "expected": "supported", "actual": "unknown"},
        {"what": "rejected", "key": "rejected", "expected": ["a"], "actual": []},
        {"what": "slot", "key": "crew_listed", "expected": "contradicted",
         "actual": "supported", "perturbation": "shift_days(+1)"},
        {"what": "input", "key": "request.token_budget", "expected": "valid",
         "actual": "Input should be greater than or equal to 0"},
    ]  # fmt: skip
    assert [expectations.failure_text(f) for f in stored] == [
        "'hull_certified' should be supported; it is unknown (no admissible evidence).",
        "Exactly 'a' should be rejected; rejected: nothing ('a' missing).",
        "Under 'shift_days(+1)': 'crew_listed' should be contradicted (its sources disagree); "
        "it is supported.",
        "The compiler cannot read the scenario: 'request.token_budget': Input should be "
        "greater than or equal to 0.",
    ]


def test_the_impact_report_says_each_failing_pin_in_words(
    owner, port_type, port_draft, no_manifest
):
    """Without a published version every failure of the draft is new; the pins' read as
    sentences, and one about a proposition counts in its row."""
    from publishing.impact import impact_report

    create(
        owner, port_type, no_manifest,
        expected_decision_ready=True,
        expected_blocking=[],
        expected_required={"crew_listed": False},
        expected_resource_ids={"hull_certified": ["insp-P7"]},
    )  # fmt: skip
    report = impact_report(port_draft).document
    (entry,) = report["scenarios"]
    assert [f["text"] for f in entry["newly_failing"]] == [
        "'berth' no longer meets its expectation that the decision is ready (it would not be "
        "ready).",
        "'berth' no longer meets its expectation of exactly which propositions block the "
        "decision ('crew_listed' would block it too).",
        "'berth' no longer meets its expectation that 'crew_listed' is optional (it would be "
        "required).",
        "'berth' no longer meets its expectation that 'hull_certified' rests on 'insp-P7', in "
        "order (it would rest on 'cert-C1' and 'insp-P7').",
    ]
    rows = {row["proposition"]: row["newly_failing"] for row in report["propositions"]}
    assert rows == {"hull_certified": 1, "crew_listed": 1, "inspection_clear": 0}


def test_a_pin_that_nothing_blocks_reads_so(owner, port_type, port_draft, no_manifest):
    create(owner, port_type, no_manifest, expected_blocking=[])
    run = services.run_start(actor=owner, version=port_draft)
    (failure,) = base_failures(run)
    assert expectations.failure_text(failure) == (
        "Nothing should block the decision; blocking: 'crew_listed' ('crew_listed' not expected)."
    )


def test_an_expected_document_makes_a_scenario_that_gives_it_back(owner, port_type, aurora):
    """The `expected:` mapping (a file's, or a mutation proposal's) as `scenario_create`'s
    keyword arguments, and back: what is not checked stays out."""
    document = {
        "slots": {"hull_certified": "supported", "crew_listed": "supported"},
        "admitted": ["cert-C1", "insp-P7", "manifest-M2"],
        "decision_ready": True,
        "blocking": [],
        "required": {"crew_listed": True},
        "resource_ids": {"hull_certified": ["cert-C1", "insp-P7"]},
    }
    fields = port.request_fields() | expectations.scenario_fields(document)
    scenario = services.scenario_create(
        actor=owner, decision_type=port_type, corpus=aurora, name="from a proposal", **fields
    )
    scenario.refresh_from_db()
    assert expectations.expected_document(scenario) == document
    assert "rejected" not in expectations.expected_document(scenario)
