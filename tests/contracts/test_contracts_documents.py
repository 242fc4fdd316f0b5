"""The one place a version becomes the compiler's Contract document."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compiler import Contract, compile_input, load_input, sha256_hex
from contracts.documents import (
    ContractInvalid,
    compiled_contract,
    contract_document,
    validate_document,
)
from contracts.models import ContractVersion

pytestmark = pytest.mark.django_db

ATLAS_EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "atlas.json"


def test_the_demo_atlas_draft_is_the_seed_contract(draft):
    example = json.loads(ATLAS_EXAMPLE.read_text())["contract"]
    ours = compiled_contract(draft)
    theirs = Contract.model_validate(example)
    assert ours.decision_type == theirs.decision_type
    assert ours.purposes == theirs.purposes
    assert [(p.key, p.accepted_classes, p.required) for p in ours.propositions] == [
        (p.key, p.accepted_classes, p.required) for p in theirs.propositions
    ]
    assert ours.policy == theirs.policy


def test_the_compiler_compiles_the_seed_case_against_the_draft(draft):
    document = json.loads(ATLAS_EXAMPLE.read_text())
    document["contract"] = contract_document(draft)
    out = compile_input(load_input(document))
    states = {slot.proposition: slot.state for slot in out.slots}
    assert states["waiver_valid"] == "unknown"
    assert states["facility_limit"] == "supported"


def test_the_snapshot_and_hash_follow_every_valid_edit(draft):
    document = Contract.model_validate(contract_document(draft)).model_dump(mode="json")
    assert draft.snapshot == document
    assert draft.sha256 == sha256_hex(document)


def test_a_frozen_version_answers_with_its_snapshot_not_its_rows(draft):
    frozen = dict(draft.snapshot)
    draft.status = ContractVersion.Status.IN_REVIEW
    draft.save()
    draft.propositions.filter(key="waiver_valid").update(accepted_classes=["case_note"])
    assert contract_document(draft) == frozen


def test_invalid_documents_list_every_problem(draft):
    document = contract_document(draft)
    document["propositions"].append(dict(document["propositions"][0]))
    document["policy"]["min_relevance"] = 3
    with pytest.raises(ContractInvalid) as raised:
        validate_document(document)
    where = {problem.where for problem in raised.value.problems}
    assert "propositions" in where
    assert "policy.min_relevance" in where
