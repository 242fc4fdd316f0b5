"""The contract probes catch the mistakes owners make in a contract, judged against the
contract and the catalogue's authority tiers — on a domain of its own: a hospital pharmacy
releasing a controlled drug to a ward without a second pharmacist's sign-off.

Each test states a correct contract and the owner's mistake, and checks that the standard
sweep raises for the mistake a review flag the correct contract does not raise (and, where it
matters, that the correct contract raises nothing)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from compiler import (
    Perturbation,
    catalogue_problems,
    compile_input,
    load_input,
    output_failures,
    review_flags,
    standard_suite,
    sweep,
)

PURPOSE = "controlled_drug_release"
WARD = "WARD-7B"
DAY = "2026-11-20"
CATALOGUE = {
    "e_prescription": 1,  # the prescribing system's record
    "dispensing_log": 1,  # the pharmacy system's record
    "allergy_register": 1,
    "signed_paper_script": 2,
    "pharmacist_review": 2,
    "ward_memo": 3,
    "nurse_note": 4,
}
WEAK = ["nurse_note"]


def item(cid: str, cls: str, supports=(), contradicts=(), **extra: Any) -> dict[str, Any]:
    return {
        "id": cid,
        "entity": WARD,
        "allowed_roles": ["pharmacist"],
        "allowed_purposes": [PURPOSE, "stock_audit"],
        "evidence_class": cls,
        "supports": list(supports),
        "contradicts": list(contradicts),
        "valid_from": "2026-01-01",
        "tokens": 60,
        "relevance": extra.pop("relevance", 0.8),
        "content": f"{cls} {cid}",
        **extra,
    }


def contract(**changes: Any) -> dict[str, Any]:
    doc = {
        "decision_type": "pharmacy.controlled_release",
        "version": "3",
        "purposes": [PURPOSE],
        "propositions": [
            {
                "key": "prescription_valid",
                "accepted_classes": ["e_prescription", "signed_paper_script"],
            },
            {"key": "stock_reconciled", "accepted_classes": ["dispensing_log"]},
            {"key": "no_allergy", "accepted_classes": ["allergy_register", "pharmacist_review"]},
        ],
        "policy": {"min_relevance": 0.3},
    }
    doc.update(changes)
    return doc


def document(contract_doc: dict[str, Any], purpose: str = PURPOSE) -> Any:
    return load_input({
        "request": {
            "decision_type": "pharmacy.controlled_release",
            "principal": "priya",
            "roles": ["pharmacist"],
            "purpose": purpose,
            "entity": WARD,
            "decision_date": DAY,
            "token_budget": 2000,
        },
        "contract": contract_doc,
        "candidates": [
            item("RX-1", "e_prescription", ["prescription_valid"]),
            item("LOG-4", "dispensing_log", ["stock_reconciled"]),
            item("ALG-2", "allergy_register", ["no_allergy"]),
            item("MEMO-9", "ward_memo", ["stock_reconciled"], relevance=0.9),
        ],
    })  # fmt: skip


def mistake(edit) -> dict[str, Any]:
    doc = contract()
    edit(doc)
    return doc


def flags(contract_doc: dict[str, Any], purpose: str = PURPOSE) -> set[tuple[str, ...]]:
    report = sweep(document(contract_doc, purpose), weak_classes=WEAK, catalogue=CATALOGUE)
    return review_flags(report)


def raised(contract_doc: dict[str, Any]) -> set[tuple[str, ...]]:
    """What the mistaken contract raises that the correct one does not."""
    return flags(contract_doc) - flags(contract())


def props(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["key"]: p for p in doc["propositions"]}


def test_the_correct_contract_has_no_violation():
    report = sweep(document(contract()), weak_classes=WEAK, catalogue=CATALOGUE)
    assert report["totals"]["violations"] == 0, [
        v for r in report["perturbations"] for v in r["verdicts"] if v["kind"] == "violation"
    ]


def test_a_lower_authority_ranked_first_is_a_violation_naming_both_classes():
    reversed_ = mistake(
        lambda d: props(d)["prescription_valid"].update(
            accepted_classes=["signed_paper_script", "e_prescription"]
        )
    )
    report = sweep(document(reversed_), weak_classes=WEAK, catalogue=CATALOGUE)
    row = next(r for r in report["perturbations"] if r["operator"] == "precedence")
    (violation,) = [v for v in row["verdicts"] if v["kind"] == "violation"]
    assert violation["proposition"] == "prescription_valid"
    assert (
        "signed_paper_script (authority tier 2) ahead of e_prescription (authority tier 1)"
        in (violation["message"])
    )
    assert ("precedence", "prescription_valid", "violation", "signed_paper_script") in raised(
        reversed_
    )


def test_precedence_among_equals_raises_nothing():
    # Without the catalogue's tiers the probe only checks the compiler honours the order.
    reversed_ = mistake(
        lambda d: props(d)["prescription_valid"].update(
            accepted_classes=["signed_paper_script", "e_prescription"]
        )
    )
    report = sweep(document(reversed_), weak_classes=WEAK)
    assert report["totals"]["violations"] == 0


def test_a_widened_purpose_is_a_finding_naming_what_changes():
    widened = mistake(lambda d: d["purposes"].append("stock_audit"))
    report = sweep(document(widened), weak_classes=WEAK, catalogue=CATALOGUE)
    row = next(r for r in report["perturbations"] if r["name"] == "swap_purpose(stock_audit)")
    (finding,) = [v for v in row["verdicts"] if v["proposition"] is None]
    assert finding["kind"] == "finding" and finding["cause"] == "stock_audit"
    assert finding["message"].startswith("the contract also permits stock_audit")
    assert ("swap_purpose", "", "finding", "stock_audit") in raised(widened)


def test_a_purpose_the_contract_does_not_permit_must_be_refused():
    suite = standard_suite(document(contract()), WEAK, catalogue=CATALOGUE)
    unpermitted = [p for p in suite if p.operator == "swap_purpose"]
    assert [p.args for p in unpermitted] == [{"purpose": "unpermitted_purpose"}]
    report = sweep(document(contract()), unpermitted, WEAK, catalogue=CATALOGUE)
    assert report["perturbations"][0]["result"] == "refused"
    assert report["perturbations"][0]["verdict"] == "expected"


def test_a_class_below_the_first_class_authority_is_a_finding_for_each_proposition():
    lowered = mistake(
        lambda d: props(d)["stock_reconciled"]["accepted_classes"].append("ward_memo")
    )
    new = raised(lowered)
    assert ("promote_classes", "stock_reconciled", "finding", "ward_memo") in new


def test_an_unaccepted_class_claiming_approval_is_never_admitted():
    report = sweep(document(contract()), weak_classes=WEAK, catalogue=CATALOGUE)
    row = next(r for r in report["perturbations"] if r["operator"] == "promote_classes")
    # Every non-weak class of the catalogue and the corpus is tried, not only the weak ones.
    assert row["args"]["classes"] == sorted(set(CATALOGUE) - set(WEAK))
    # Nothing the contract does not accept is admitted; what it accepts below its first class's
    # authority (a paper script, a pharmacist's review) is a finding a reviewer confirms.
    assert [
        (v["kind"], v["proposition"], v["cause"])
        for v in row["verdicts"]
        if v["kind"] != "expected"
    ] == [
        ("finding", "prescription_valid", "signed_paper_script"),
        ("finding", "no_allergy", "pharmacist_review"),
    ]
    assert not [i for i in row["flips"]["admitted_added"] if "ward_memo" in i]


def test_a_weak_class_accepted_is_still_the_weak_promotion_violation_with_its_class_as_cause():
    weak = mistake(lambda d: props(d)["no_allergy"]["accepted_classes"].append("nurse_note"))
    assert ("promote_weak", "no_allergy", "violation", "nurse_note") in raised(weak)


def test_a_dropped_contradicting_class_hides_a_disagreement():
    def with_alert(doc: Any) -> Any:
        return doc.model_copy(update={"candidates": (*doc.candidates, *load_input({
            **doc.model_dump(mode="json"),
            "candidates": [item("REV-3", "pharmacist_review", contradicts=["no_allergy"])],
        }).candidates)})  # fmt: skip

    dropped = mistake(
        lambda d: props(d)["no_allergy"].update(accepted_classes=["allergy_register"])
    )
    right = sweep(with_alert(document(contract())), weak_classes=WEAK, catalogue=CATALOGUE)
    wrong = sweep(with_alert(document(dropped)), weak_classes=WEAK, catalogue=CATALOGUE)
    assert right["base"]["slots"]["no_allergy"] == "contradicted"
    assert wrong["base"]["slots"]["no_allergy"] == "supported"
    new = review_flags(wrong) - review_flags(right)
    assert ("contradict_classes", "no_allergy", "finding", "pharmacist_review") in new
    row = next(
        r
        for r in wrong["perturbations"]
        if r["name"] == "contradict_classes(no_allergy=pharmacist_review)"
    )
    assert "does not surface" in next(
        v["message"] for v in row["verdicts"] if v["proposition"] == "no_allergy"
    )


def test_every_accepted_class_contradicting_surfaces():
    suite = standard_suite(document(contract()), WEAK, catalogue=CATALOGUE)
    ranked = [p.args for p in suite if p.operator == "contradict_classes"]
    assert ranked == [
        {
            "classes": {
                "prescription_valid": "signed_paper_script",
                "no_allergy": "pharmacist_review",
            }
        }
    ]
    report = sweep(document(contract()), weak_classes=WEAK, catalogue=CATALOGUE)
    row = next(r for r in report["perturbations"] if r["operator"] == "contradict_classes")
    assert row["slots"]["prescription_valid"] == row["slots"]["no_allergy"] == "contradicted"
    assert row["verdict"] == "expected"


def test_a_required_proposition_made_optional_is_flagged_where_it_would_not_block():
    optional = mistake(lambda d: props(d)["no_allergy"].update(required=False))
    new = raised(optional)
    assert ("remove_support", "no_allergy", "finding", "optional") in new
    assert ("contradict_first", "no_allergy", "finding", "optional") in new


def test_an_optional_proposition_in_the_correct_contract_is_no_new_flag_when_unchanged():
    optional = mistake(lambda d: props(d)["no_allergy"].update(required=False))
    # Comparing the optional contract with itself raises nothing: flags are by cause.
    assert flags(optional) - flags(optional) == set()
    reworded = copy.deepcopy(optional)
    reworded["propositions"][2]["description"] = "No recorded allergy to the drug."
    assert flags(reworded) == flags(optional)


def test_max_items_raised_lets_duplicates_into_the_slot():
    raised_max = mistake(lambda d: props(d)["prescription_valid"].update(max_items=3))
    assert {k for k in raised(raised_max) if k[0] == "crowd"} == {
        ("crowd", "prescription_valid", "finding", "2 copies of one record"),
        ("crowd", "prescription_valid", "finding", "3 copies of one record"),
    }
    # From 3 to 5 only the new numbers of copies are new; back down from 5 to 3 nothing is.
    five = mistake(lambda d: props(d)["prescription_valid"].update(max_items=5))
    assert flags(five) - flags(raised_max) == {
        ("crowd", "prescription_valid", "finding", "4 copies of one record"),
        ("crowd", "prescription_valid", "finding", "5 copies of one record"),
    }
    assert flags(raised_max) - flags(five) == set()


def test_min_relevance_lowered_lets_barely_relevant_items_in():
    lowered = mistake(lambda d: d.update(policy={"min_relevance": 0.0}))
    assert {k for k in raised(lowered) if k[0] == "crowd"} == {
        ("crowd", "", "finding", "relevance 0.05"),
        ("crowd", "", "finding", "relevance 0.15"),
        ("crowd", "", "finding", "relevance 0.25"),
    }
    # A small step down (0.3 to 0.22) is seen too; a step up (0.3 to 0.4) raises nothing.
    assert raised(mistake(lambda d: d.update(policy={"min_relevance": 0.22}))) == {
        ("crowd", "", "finding", "relevance 0.25")
    }
    assert raised(mistake(lambda d: d.update(policy={"min_relevance": 0.4}))) == set()


def test_a_dropped_or_mistyped_proposition_is_named_by_the_items_that_claim_it():
    dropped = mistake(lambda d: d["propositions"].pop())
    assert ("corpus", "no_allergy", "finding", "not in the contract") in raised(dropped)
    mistyped = mistake(lambda d: props(d)["no_allergy"].update(key="no_alergy"))
    assert ("corpus", "no_allergy", "finding", "not in the contract") in raised(mistyped)


@pytest.mark.parametrize(
    "harmless",
    [
        lambda d: d.update(version="4"),
        lambda d: d["propositions"].reverse(),
        lambda d: props(d)["stock_reconciled"].update(description="Stock matches the log."),
        lambda d: d.update(policy={"min_relevance": 0.35}),
        lambda d: props(d)["stock_reconciled"].update(max_items=1),
    ],
    ids=["version", "order", "description", "min-relevance-up", "max-items-same"],
)
def test_harmless_edits_raise_nothing(harmless):
    assert raised(mistake(harmless)) == set()


def test_an_accepted_class_outside_the_catalogue_is_a_catalogue_problem():
    outside = mistake(
        lambda d: props(d)["prescription_valid"]["accepted_classes"].append("machine_summary")
    )
    assert catalogue_problems(load_input_contract(outside), CATALOGUE) == [
        "proposition 'prescription_valid' accepts 'machine_summary', which is not in the "
        "source-class catalogue"
    ]
    assert catalogue_problems(load_input_contract(contract()), CATALOGUE) == []
    assert catalogue_problems(load_input_contract(outside), {}) == []


def load_input_contract(contract_doc: dict[str, Any]) -> Any:
    return document(contract_doc).contract


def test_output_failures_pin_readiness_blocking_required_resources_and_admitted():
    optional = mistake(lambda d: props(d)["no_allergy"].update(required=False))
    doc = document(optional)
    hidden = Perturbation("hide", {"candidate_id": "ALG-2"}).apply(doc)
    output = compile_input(hidden)
    expected = {
        "slots": {"no_allergy": "unknown"},
        "decision_ready": False,
        "blocking": ["no_allergy"],
        "required": {"no_allergy": True},
        "resource_ids": {"prescription_valid": ["RX-1"], "stock_reconciled": ["LOG-4"]},
        "admitted": ["RX-1", "LOG-4", "MEMO-9"],
    }
    failures = output_failures(output, hidden, expected)
    assert failures == [
        {"what": "decision_ready", "key": None, "expected": False, "actual": True},
        {"what": "blocking", "key": None, "expected": ["no_allergy"], "actual": []},
        {"what": "required", "key": "no_allergy", "expected": True, "actual": False},
        {"what": "admitted", "key": None, "expected": ["LOG-4", "MEMO-9", "RX-1"],
         "actual": ["LOG-4", "RX-1"]},
    ]  # fmt: skip
    assert output_failures(output, hidden, {"slots": {}, "decision_ready": None}) == []
