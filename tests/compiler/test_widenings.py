"""`compiler.contract_widenings`: every widening of a contract against a baseline, on a vendor
onboarding contract (a supplier's due diligence before the first purchase order)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

import compiler
from compiler import WIDENING_KINDS, Contract, Widening, contract_widenings

BASELINE: dict[str, Any] = {
    "decision_type": "vendor.onboarding",
    "version": "3",
    "purposes": ["vendor_onboarding"],
    "propositions": [
        {
            "key": "tax_registration_valid",
            "accepted_classes": ["tax_authority_record", "registration_certificate"],
        },
        {
            "key": "insurance_in_force",
            "accepted_classes": ["insurer_certificate", "broker_letter", "policy_schedule"],
            "max_items": 2,
        },
        {"key": "sanctions_clear", "accepted_classes": ["screening_result"]},
        {"key": "bank_account_verified", "accepted_classes": ["bank_letter"], "required": False},
    ],
    "policy": {"min_relevance": 0.4},
}


def edited(**changes: Any) -> Contract:
    """The baseline with whole fields replaced, or propositions edited by key
    (`propositions={"key": {...fields...} | None}`; None removes it, a new key appends it)."""
    document = {**BASELINE, **{k: v for k, v in changes.items() if k != "propositions"}}
    propositions = [dict(p) for p in BASELINE["propositions"]]
    for key, fields in changes.get("propositions", {}).items():
        found = next((p for p in propositions if p["key"] == key), None)
        if fields is None:
            propositions.remove(found)
        elif found is None:
            propositions.append({"key": key, **fields})
        else:
            found.update(fields)
    document["propositions"] = propositions
    return Contract.model_validate(document)


def rows(widenings: list[Widening]) -> list[tuple[str, str | None, str]]:
    return [(w.kind, w.proposition, w.id) for w in widenings]


OLD = Contract.model_validate(BASELINE)

CASES = [
    pytest.param({}, [], id="unchanged"),
    pytest.param(
        {"propositions": {"sanctions_clear": {"accepted_classes": ["screening_result", "email"]}}},
        [("class_added", "sanctions_clear", "class_added:sanctions_clear:email")],
        id="class added",
    ),
    pytest.param(
        {"propositions": {"insurance_in_force": {"accepted_classes": ["insurer_certificate"]}}},
        [],
        id="class removed is a narrowing",
    ),
    pytest.param(
        {"propositions": {"sanctions_clear": {"required": False}}},
        [("requirement_dropped", "sanctions_clear", "requirement_dropped:sanctions_clear")],
        id="required made optional",
    ),
    pytest.param(
        {"propositions": {"bank_account_verified": {"required": True}}},
        [],
        id="optional made required is a narrowing",
    ),
    pytest.param(
        {"propositions": {"sanctions_clear": None}},
        [("requirement_dropped", "sanctions_clear", "requirement_dropped:sanctions_clear")],
        id="required proposition removed",
    ),
    pytest.param(
        {"propositions": {"bank_account_verified": None}},
        [
            (
                "requirement_dropped",
                "bank_account_verified",
                "requirement_dropped:bank_account_verified",
            )
        ],
        id="optional proposition removed",
    ),
    pytest.param(
        {"propositions": {"beneficial_owner_known": {"accepted_classes": ["registry_extract"]}}},
        [],
        id="proposition added is a narrowing",
    ),
    pytest.param(
        # A mistyped key: the real proposition is gone, and the new one accepts nothing extra.
        {
            "propositions": {
                "sanctions_clear": None,
                "sanction_clear": {"accepted_classes": ["screening_result", "email"]},
            }
        },
        [("requirement_dropped", "sanctions_clear", "requirement_dropped:sanctions_clear")],
        id="key mistyped",
    ),
    pytest.param(
        {"purposes": ["vendor_onboarding", "spend_analytics"]},
        [("purpose_added", None, "purpose_added:spend_analytics")],
        id="purpose added",
    ),
    pytest.param(
        {"purposes": ["renewal"]},
        [("purpose_added", None, "purpose_added:renewal")],
        id="purpose replaced",
    ),
    pytest.param({"purposes": []}, [], id="purpose removed is a narrowing"),
    pytest.param(
        {
            "propositions": {
                "tax_registration_valid": {
                    "accepted_classes": ["registration_certificate", "tax_authority_record"]
                }
            }
        },
        [
            (
                "precedence_changed",
                "tax_registration_valid",
                "precedence_changed:tax_registration_valid:registration_certificate",
            )
        ],
        id="two classes swapped",
    ),
    pytest.param(
        {
            "propositions": {
                "insurance_in_force": {
                    "accepted_classes": ["policy_schedule", "broker_letter", "insurer_certificate"]
                }
            }
        },
        [
            (
                "precedence_changed",
                "insurance_in_force",
                "precedence_changed:insurance_in_force:policy_schedule",
            ),
            (
                "precedence_changed",
                "insurance_in_force",
                "precedence_changed:insurance_in_force:broker_letter",
            ),
        ],
        id="three classes reversed",
    ),
    pytest.param(
        # The new class goes first: it is added (one widening), not a reordering of the others.
        {
            "propositions": {
                "sanctions_clear": {"accepted_classes": ["news_search", "screening_result"]}
            }
        },
        [("class_added", "sanctions_clear", "class_added:sanctions_clear:news_search")],
        id="class added ahead of the others",
    ),
    pytest.param(
        {
            "propositions": {
                "insurance_in_force": {
                    "accepted_classes": ["insurer_certificate", "policy_schedule"]
                }
            }
        },
        [],
        id="middle class removed keeps the order",
    ),
    pytest.param(
        {"policy": {"min_relevance": 0.1}},
        [("min_relevance_lowered", None, "min_relevance_lowered")],
        id="min_relevance lowered",
    ),
    pytest.param(
        {"policy": {}},
        [("min_relevance_lowered", None, "min_relevance_lowered")],
        id="policy reset to its default floor",
    ),
    pytest.param({"policy": {"min_relevance": 0.7}}, [], id="min_relevance raised"),
    pytest.param(
        {"propositions": {"insurance_in_force": {"max_items": 5}}},
        [("max_items_raised", "insurance_in_force", "max_items_raised:insurance_in_force")],
        id="max_items raised",
    ),
    pytest.param(
        {"propositions": {"insurance_in_force": {"max_items": 1}}}, [], id="max_items lowered"
    ),
    pytest.param(
        {
            "propositions": {"insurance_in_force": {"description": "cover of at least 1M"}},
            "version": "4",
            "policy": {"min_relevance": 0.4, "name": "strict", "version": 2},
        },
        [],
        id="descriptions, version and policy name are not widenings",
    ),
]


@pytest.mark.parametrize(("changes", "expected"), CASES)
def test_each_widening_is_listed(changes: dict[str, Any], expected: list[tuple]) -> None:
    assert rows(contract_widenings(OLD, edited(**changes))) == expected


def test_several_widenings_come_by_kind_then_in_contract_order() -> None:
    new = edited(
        purposes=["vendor_onboarding", "audit"],
        policy={"min_relevance": 0.2},
        propositions={
            "insurance_in_force": {
                "max_items": 3,
                "accepted_classes": ["broker_letter", "insurer_certificate", "policy_schedule"],
            },
            "tax_registration_valid": {"required": False},
            "sanctions_clear": {"accepted_classes": ["screening_result", "web_page"]},
            "bank_account_verified": {"accepted_classes": ["bank_letter", "invoice"]},
        },
    )
    widenings = contract_widenings(OLD, new)
    assert [w.kind for w in widenings] == [
        "class_added",
        "class_added",
        "requirement_dropped",
        "purpose_added",
        "precedence_changed",
        "min_relevance_lowered",
        "max_items_raised",
    ]
    assert [w.id for w in widenings[:2]] == [
        "class_added:sanctions_clear:web_page",
        "class_added:bank_account_verified:invoice",
    ]
    assert widenings == contract_widenings(OLD, new)  # deterministic
    assert len({w.id for w in widenings}) == len(widenings)
    assert {w.kind for w in widenings} == set(WIDENING_KINDS)


def test_the_details_say_what_changed_and_what_it_was() -> None:
    new = edited(
        policy={"min_relevance": 0.15},
        propositions={
            "sanctions_clear": {"required": False},
            "insurance_in_force": {
                "max_items": 4,
                "accepted_classes": ["broker_letter", "insurer_certificate", "policy_schedule"],
            },
            "bank_account_verified": None,
        },
    )
    details = {w.id: w.detail for w in contract_widenings(OLD, new)}
    assert details == {
        "requirement_dropped:sanctions_clear": "'sanctions_clear' becomes optional: a gap in it "
        "no longer blocks the decision (the baseline required it).",
        "requirement_dropped:bank_account_verified": "'bank_account_verified' is removed from "
        "the contract: packets no longer carry a slot for it.",
        "precedence_changed:insurance_in_force:broker_letter": "'insurance_in_force' now prefers "
        "'broker_letter' to 'insurer_certificate', which the baseline preferred to it: when both "
        "are available, 'broker_letter' fills the slot.",
        "min_relevance_lowered": "Optional items now need a relevance of only 0.15 to enter the "
        "packet (the baseline needed 0.4).",
        "max_items_raised:insurance_in_force": "'insurance_in_force' may now carry up to 4 "
        "supporting items (the baseline allowed 2).",
    }


def test_a_widening_is_frozen_plain_json() -> None:
    [widening] = contract_widenings(OLD, edited(purposes=["vendor_onboarding", "audit"]))
    assert widening.to_json() == {
        "kind": "purpose_added",
        "proposition": None,
        "detail": "The contract may now be used for the purpose 'audit', which the baseline "
        "refused.",
        "id": "purpose_added:audit",
    }
    with pytest.raises(ValidationError):
        widening.detail = "nothing"  # type: ignore[misc]


def test_the_package_surface_exports_it() -> None:
    assert compiler.contract_widenings is contract_widenings
    assert compiler.Widening is Widening
    assert {"Widening", "contract_widenings"} <= set(compiler.__all__)
