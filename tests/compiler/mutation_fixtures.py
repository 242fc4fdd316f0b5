"""Two small decision types for mutation testing, neither the demo's: a clinical trial's
enrolment screening (compile inputs in memory) and a pharmacy's dispensing check (a contract
test directory on disk, for the CLI).

(A distinctive module name: tests/ is not a package, see evidence_factories.)
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from compiler import CompileInput, load_input

# --- Clinical trial enrolment -----------------------------------------------------------

ENROLMENT = {
    "decision_type": "trial.enrolment.screening",
    "version": "4",
    "purposes": ["trial_enrolment"],
    "propositions": [
        {"key": "consent_signed", "accepted_classes": ["signed_consent_form"]},
        {"key": "eligibility_met", "accepted_classes": ["investigator_assessment", "lab_result"]},
        {"key": "washout_complete", "accepted_classes": ["pharmacy_record"], "required": False},
    ],
    "policy": {"min_relevance": 0.3},
}
# class -> authority tier (1 best); the nurse's note is the weak class.
ENROLMENT_CATALOGUE = {
    "signed_consent_form": 1,
    "investigator_assessment": 1,
    "pharmacy_record": 1,
    "lab_result": 2,
    "referral_letter": 3,
    "nurse_note": 4,
}
ENROLMENT_WEAK = ("nurse_note",)


def enrolment_item(item_id: str, evidence_class: str, supports: list[str], **fields: Any):
    return {
        "id": item_id,
        "entity": "PT-0042",
        "allowed_roles": ["study_coordinator"],
        "allowed_purposes": ["trial_enrolment"],
        "evidence_class": evidence_class,
        "supports": supports,
        "valid_from": "2026-01-05",
        "tokens": 60,
        "relevance": 0.7,
        "content": f"{evidence_class} {item_id}",
    } | fields


ENROLMENT_POOL = [
    enrolment_item("consent-C1", "signed_consent_form", ["consent_signed"], relevance=0.8),
    enrolment_item("assessment-A1", "investigator_assessment", ["eligibility_met"]),
    enrolment_item("pharmacy-P1", "pharmacy_record", ["washout_complete"], relevance=0.6),
    enrolment_item("nurse-N1", "nurse_note", ["consent_signed"], relevance=0.95,
                   content="Participant told me they signed the consent form."),
]  # fmt: skip
# Before the pharmacy has recorded the washout: no item claims `washout_complete` (optional,
# so the decision can still be ready). Dropping it from the contract then leaves no item
# claiming a proposition the contract does not ask for, and no review flag notices.
WASHOUT_PENDING_POOL = [item for item in ENROLMENT_POOL if item["id"] != "pharmacy-P1"]
# An abnormal lab panel: a lab result contradicting eligibility.
ABNORMAL_LAB = enrolment_item(
    "lab-L2", "lab_result", [], contradicts=["eligibility_met"], relevance=0.9,
    content="Creatinine clearance below the threshold.",
)  # fmt: skip


def enrolment_document(
    candidates: list[dict[str, Any]] | None = None, contract: dict[str, Any] | None = None
) -> CompileInput:
    return load_input(
        {
            "request": {
                "decision_type": "trial.enrolment.screening",
                "principal": "ines",
                "roles": ["study_coordinator"],
                "purpose": "trial_enrolment",
                "entity": "Participant 42",
                "decision_date": "2026-03-10",
                "token_budget": 600,
            },
            "contract": copy.deepcopy(contract or ENROLMENT),
            "directory": {"entities": {"PT-0042": ["Participant 42"]}},
            "candidates": copy.deepcopy(ENROLMENT_POOL if candidates is None else candidates),
        }
    )


# --- Pharmacy dispensing, as a contract test directory ---------------------------------

DISPENSE_CONTRACT = {
    "decision_type": "pharmacy.dispense.check",
    "version": "2",
    "purposes": ["dispensing"],
    "propositions": [
        {"key": "prescription_valid", "accepted_classes": ["e_prescription", "paper_script"]},
        {"key": "allergy_clear", "accepted_classes": ["allergy_register"]},
    ],
}
DISPENSE_CLASSES = [
    {"key": "e_prescription", "authority_tier": "system_of_record"},
    {"key": "paper_script", "authority_tier": "controlled_document"},
    {"key": "allergy_register", "authority_tier": 1},
    {"key": "counter_note", "authority_tier": "informal", "weak": True},
]
# Where a signed paper script has the same standing as an e-prescription: reversing the two
# changes which record the slot rests on, yet no class ranks below the other, so no review
# flag notices it (only a pinned resource id does).
DISPENSE_CLASSES_ONE_TIER = [
    c | {"authority_tier": "system_of_record"} if c["key"] == "paper_script" else c
    for c in DISPENSE_CLASSES
]


def dispense_item(item_id: str, evidence_class: str, supports: list[str], **fields: Any):
    return {
        "id": item_id,
        "entity": "RX-881",
        "allowed_roles": ["pharmacist"],
        "allowed_purposes": ["dispensing"],
        "evidence_class": evidence_class,
        "supports": supports,
        "valid_from": "2026-02-01",
        "tokens": 50,
        "relevance": 0.7,
        "content": f"{evidence_class} {item_id}",
    } | fields


DISPENSE_POOL = [
    dispense_item("rx-E1", "e_prescription", ["prescription_valid"]),
    dispense_item("allergy-R1", "allergy_register", ["allergy_clear"], relevance=0.6),
    dispense_item("counter-K1", "counter_note", ["prescription_valid"], relevance=0.9,
                  content="Customer says the doctor phoned it in."),
]  # fmt: skip
DISPENSE_REQUEST = {
    "decision_type": "pharmacy.dispense.check",
    "principal": "omar",
    "roles": ["pharmacist"],
    "purpose": "dispensing",
    "entity": "RX-881",
    "decision_date": "2026-02-20",
    "token_budget": 400,
}


def write_dispense_directory(
    root: Path,
    *,
    expected: dict[str, Any] | None = None,
    min_relevance: float | None = None,
    source_classes: list[dict[str, Any]] | None = None,
) -> Path:
    """A pharmacy test directory: contract.yaml with its catalogue (`DISPENSE_CLASSES` unless
    given), one corpus, one scenario."""
    (root / "corpora").mkdir(parents=True)
    (root / "scenarios").mkdir()
    contract = copy.deepcopy(DISPENSE_CONTRACT)
    if min_relevance is not None:
        contract["policy"] = {"min_relevance": min_relevance}
    header = {"format": "evidence-compiler.tests/1", "contract": contract,
              "source_classes": source_classes or DISPENSE_CLASSES}  # fmt: skip
    (root / "contract.yaml").write_text(yaml.safe_dump(header, sort_keys=False))
    corpus = {"directory": {}, "candidates": DISPENSE_POOL}
    (root / "corpora" / "counter.yaml").write_text(yaml.safe_dump(corpus, sort_keys=False))
    scenario = {
        "name": "repeat-dispense",
        "request": DISPENSE_REQUEST,
        "corpus": "counter",
        "expected": expected or {"slots": {"prescription_valid": "supported",
                                           "allergy_clear": "supported"}},
    }  # fmt: skip
    (root / "scenarios" / "repeat-dispense.yaml").write_text(
        yaml.safe_dump(scenario, sort_keys=False)
    )
    return root
