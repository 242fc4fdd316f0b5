"""The impact report: the contract diff in plain sentences, and the scenarios compiled
against both versions."""

from __future__ import annotations

import copy

import pytest

from compiler import sha256_hex
from contracts import services
from publishing import review
from publishing.impact import contract_changes

pytestmark = pytest.mark.django_db

BEFORE = {
    "purposes": ["annual_credit_review"],
    "propositions": [
        {"key": "facility_limit", "accepted_classes": ["facility_record"], "required": True,
         "max_items": 1, "description": ""},
        {"key": "waiver_valid", "accepted_classes": ["approved_waiver", "committee_record"],
         "required": True, "max_items": 1, "description": ""},
    ],
    "policy": {"name": "default", "version": 1, "min_relevance": 0.0,
               "mandatory_form": "cheapest", "role_order": ["instruction", "evidence"],
               "on_overrun": "drop_last_discretionary"},
}  # fmt: skip


def changed(**edits):
    after = copy.deepcopy(BEFORE)
    for path, value in edits.items():
        target = after
        *parents, leaf = path.split("__")
        for part in parents:
            target = target[int(part)] if part.isdigit() else target[part]
        target[int(leaf) if leaf.isdigit() else leaf] = value
    return after


@pytest.mark.parametrize(
    ("after", "kinds", "sentence"),
    [
        (changed(propositions__1__accepted_classes=["approved_waiver", "case_note"]),
         ["class_added", "class_removed"],
         "'waiver_valid' may now be established by 'case_note' (its 2nd choice of 2)."),
        (changed(propositions__1__accepted_classes=["committee_record", "approved_waiver"]),
         ["class_order"],
         "'waiver_valid' changes which evidence it prefers when several kinds are available: "
         "now 'committee_record' and 'approved_waiver', most preferred first (was "
         "'approved_waiver' and 'committee_record')."),
        (changed(propositions__0__required=False), ["required"],
         "A gap in 'facility_limit' no longer blocks the decision (it becomes optional)."),
        (changed(propositions__0__max_items=3), ["max_items"],
         "'facility_limit' may now carry up to 3 supporting item(s) (was 1)."),
        (changed(propositions=[BEFORE["propositions"][0]]), ["proposition_removed"],
         "Removes the fact 'waiver_valid': packets will no longer have a slot for it."),
        (changed(propositions=[*BEFORE["propositions"],
                               {"key": "review_open", "accepted_classes": ["workflow_event"],
                                "required": False, "max_items": 1, "description": ""}]),
         ["proposition_added"],
         "Adds the fact 'review_open', established by 'workflow_event' (in that order of "
         "preference; optional)."),
        (changed(propositions=list(reversed(BEFORE["propositions"]))), ["proposition_order"],
         "Changes the order in which facts are filled when the budget is tight: now "
         "'waiver_valid' and 'facility_limit' (was 'facility_limit' and 'waiver_valid')."),
        (changed(purposes=["annual_credit_review", "audit"]), ["purposes"],
         "The contract may now be used for 'audit' as well."),
        (changed(policy__min_relevance=0.2), ["policy"],
         "The assembly policy changes the minimum relevance for optional items from 0.0 to 0.2."),
        (copy.deepcopy(BEFORE), [], None),
    ],
)  # fmt: skip
def test_contract_changes_in_plain_sentences(after, kinds, sentence):
    changes = contract_changes(BEFORE, after)
    assert [c["kind"] for c in changes] == kinds
    if sentence:
        assert sentence in [c["text"] for c in changes]


def test_a_first_version_is_described_as_new():
    (change,) = contract_changes(None, BEFORE)
    assert change["kind"] == "first_version"
    assert "'facility_limit' and 'waiver_valid'" in change["text"]


@pytest.fixture
def second_draft(published, owner):
    """Version 2 of Atlas accepting a case note for the waiver, as load_demo leaves it."""
    version = services.version_start_draft(actor=owner, decision_type=published.decision_type)
    proposition = version.propositions.get(key="waiver_valid")
    services.accepted_class_remove(
        actor=owner,
        proposition=proposition,
        expected_lock_version=version.lock_version,
        class_key="committee_record",
    )
    version.refresh_from_db()
    services.accepted_class_add(
        actor=owner,
        proposition=proposition,
        expected_lock_version=version.lock_version,
        class_key="case_note",
    )
    version.refresh_from_db()
    return version


def test_the_report_shows_flips_failures_and_admitted_changes(second_draft):
    report = review.report_for(second_draft)
    summary = report.summary
    assert report.document["published"]["number"] == 1
    assert summary["contract_changes"] == 2
    assert summary["flipped_slots"] > 0 and summary["newly_failing"] > 0
    maya = next(s for s in report.scenarios if s["name"] == "Atlas: Maya's annual review")
    base_flip = next(f for f in maya["flips"] if f["perturbation"] == "base")
    assert (base_flip["proposition"], base_flip["before"], base_flip["after"]) == (
        "waiver_valid",
        "unknown",
        "supported",
    )
    assert base_flip["text"] == (
        "In 'Atlas: Maya's annual review', 'waiver_valid' goes from unknown (no admissible "
        "evidence) to supported."
    )
    failing = [f["text"] for f in maya["newly_failing"]]
    assert (
        "'Atlas: Maya's annual review' no longer meets its expectation for 'waiver_valid': "
        "expected unknown (no admissible evidence), it would be supported." in failing
    )
    admitted = next(c for c in maya["admitted_changes"] if c["perturbation"] == "base")
    assert admitted["added"] == ["rm-note-N7"]
    assert (
        "'Atlas: Maya's annual review' no longer meets its expectation of exactly which items "
        "are admitted ('rm-note-N7' would be admitted too)." in failing
    )
    # The same change across the suite, said once.
    assert maya["summary"][0].startswith(
        "'waiver_valid' goes from unknown (no admissible evidence) to supported in the "
        "scenario as written and under 15 of its 26 variations (shift_days(-1), "
    )
    # Scenarios the change does not touch say so.
    unrelated = next(
        s
        for s in report.scenarios
        if s["name"] == "Atlas: the same question from an unrelated employee"
    )
    # ...except under weak promotion, which hands every requester an admissible case note
    # claiming the waiver: the draft that accepts case notes lets it in.
    assert {f["perturbation"] for f in unrelated["flips"]} == {
        "promote_weak(case_note+customer_email+email)"
    }


def test_the_report_hash_is_stable_and_covers_what_is_shown(second_draft):
    first, again = review.report_for(second_draft), review.report_for(second_draft)
    assert first.sha256 == again.sha256 == sha256_hex(first.document)
    assert first.document == again.document


def test_the_first_published_version_has_nothing_to_compare_with(published, second_draft):
    assert review.report_for(published.version).document["published"] is None
