"""Pools as retrievers return them (docs/design.md): references to ids outside the pool, and
items that apply to every entity."""

from __future__ import annotations

from typing import Any

import pytest
from evidence_factories import (
    ENTITY,
    assert_refused,
    candidate,
    compile_doc,
    context_item,
    contract,
    document,
    proposition,
    rejection,
    states,
)

from compiler import InvalidInput, load_input

OTHER = "BOREAL-IN-07"
DIRECTORY = {"entities": {ENTITY: ["Atlas"], OTHER: ["Boreal"]}}


def plan_trace(out, cid: str) -> list[dict[str, Any]]:
    return [e for e in out.to_json()["trace"] if e["id"] == cid and e["pass"] == "plan"]


# --------------------------------------------------------------------------- superseded_by


def test_a_successor_outside_the_pool_still_supersedes():
    out = compile_doc(document(candidate("policy-v2", superseded_by="policy-v3")))
    assert out.result == "compiled"
    assert rejection(out, "policy-v2") == ("not_applicable", "superseded")
    assert states(out) == {"facility_limit": "unknown"}
    admit = [e for e in out.to_json()["trace"] if e["id"] == "policy-v2" and e["pass"] == "admit"]
    assert [(e["outcome"], e["reason"], e["detail"]) for e in admit] == [
        ("rejected", "not_applicable", "superseded")
    ]


def test_a_successor_outside_the_pool_supersedes_on_every_date():
    # No dates of the absent successor are known, so nothing brings the item back, and it
    # bounds no expiry: valid_until comes from the admitted item alone.
    doc = document(
        candidate("kept", valid_to="2026-12-31"),
        candidate("replaced", valid_from="2026-10-01", superseded_by="not-retrieved"),
        decision_date="2026-09-01",
    )
    out = compile_doc(doc)
    assert rejection(out, "replaced") == ("not_applicable", "not_yet_valid")
    assert out.valid_until is not None and out.valid_until.isoformat() == "2026-12-31"
    later = compile_doc({**doc, "request": {**doc["request"], "decision_date": "2026-11-01"}})
    assert rejection(later, "replaced") == ("not_applicable", "superseded")


def test_a_successor_in_the_pool_still_supersedes_only_while_in_force():
    out = compile_doc(
        document(
            candidate("old", relevance=0.9, superseded_by="new"),
            candidate("new", valid_from="2026-09-15"),
        )
    )
    assert rejection(out, "old") is None
    assert [i["id"] for i in out.to_json()["packet"]] == ["old"]


# --------------------------------------------------------------------------- depends_on


def test_an_absent_dependency_keeps_its_dependent_out_with_a_named_reason():
    out = compile_doc(document(candidate("memo", depends_on=["appendix"])))
    assert out.result == "compiled"
    assert rejection(out, "memo") == ("dependency_absent", None)
    assert out.packet == ()
    assert states(out) == {"facility_limit": "unknown"}
    # The trace names the id the pool lacks; the rejection keeps to codes.
    assert [(e["outcome"], e["reason"], e["detail"]) for e in plan_trace(out, "memo")] == [
        ("rejected", "dependency_absent", "appendix")
    ]


def test_an_absent_dependency_blocks_what_travels_with_it():
    out = compile_doc(
        document(
            candidate("top", depends_on=["middle"], relevance=0.9),
            context_item("middle", depends_on=["gone"]),
            context_item("sibling", group="bundle"),
            context_item("member", group="bundle", depends_on=["gone-too"]),
            candidate("fine", relevance=0.1),
        )
    )
    for cid, absent in [
        ("top", "gone"),
        ("middle", "gone"),
        ("sibling", "gone-too"),
        ("member", "gone-too"),
    ]:
        assert rejection(out, cid) == ("dependency_absent", None), cid
        assert plan_trace(out, cid)[-1]["detail"] == absent
    assert [i["id"] for i in out.to_json()["packet"]] == ["fine"]
    assert states(out) == {"facility_limit": "supported"}


def test_an_absent_dependency_outranks_a_rejected_one():
    out = compile_doc(
        document(
            candidate("memo", depends_on=["annex", "locked"]),
            context_item("locked", allowed_roles=["nobody"]),
        )
    )
    assert rejection(out, "locked") == ("not_authorised", "role")
    assert rejection(out, "memo") == ("dependency_absent", None)


def test_a_dependency_rejected_in_the_pool_is_still_missing_not_absent():
    out = compile_doc(
        document(
            candidate("memo", depends_on=["locked"]),
            context_item("locked", allowed_roles=["nobody"]),
        )
    )
    assert rejection(out, "memo") == ("dependency_missing", None)
    assert plan_trace(out, "memo")[-1]["detail"] is None


def test_a_contradiction_with_an_absent_dependency_stays_visible():
    # It is in U (authorised, applicable, of an accepted class): invariant 4 holds.
    out = compile_doc(
        document(
            candidate("record"),
            candidate("breach", supports=[], contradicts=["facility_limit"], depends_on=["x"]),
        )
    )
    assert rejection(out, "breach") == ("dependency_absent", None)
    assert states(out) == {"facility_limit": "contradicted"}


def test_a_named_item_with_an_absent_dependency_is_refused_with_that_reason():
    out = compile_doc(document(candidate("memo", depends_on=["appendix"]), named=["memo"]))
    assert_refused(out, "plan", "named_not_admissible")
    assert out.to_json()["refusal"]["detail"] == "dependency_absent"


def test_references_outside_the_pool_are_valid_input():
    loaded = load_input(
        document(candidate("a", depends_on=["elsewhere"], superseded_by="also-elsewhere"))
    )
    assert loaded.candidates[0].depends_on == ("elsewhere",)


# --------------------------------------------------------------------------- every entity


def every_entity(cid: str = "policy", **overrides: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {"entity": "*", "evidence_class": "policy"}
    return candidate(cid, **{**fields, "supports": ["policy_applies"], **overrides})


POLICY_CONTRACT = contract(proposition("policy_applies", "policy", max_items=2))


def compile_for(entity: str, *candidates: dict[str, Any], **request: Any):
    return compile_doc(
        document(*candidates, con=POLICY_CONTRACT, directory=DIRECTORY, entity=entity, **request)
    )


@pytest.mark.parametrize("entity", [ENTITY, OTHER, "Boreal"])
def test_an_item_for_every_entity_is_admitted_for_each(entity):
    out = compile_for(entity, every_entity(), every_entity("atlas-only", entity=ENTITY))
    assert [i["id"] for i in out.to_json()["packet"]] == (
        ["atlas-only", "policy"] if entity == ENTITY else ["policy"]
    )
    assert states(out) == {"policy_applies": "supported"}


@pytest.mark.parametrize(
    ("overrides", "request_fields", "expected"),
    [
        pytest.param(
            {"denied_principals": ["maya"]}, {}, ("not_authorised", "denied"), id="denied-principal"
        ),
        pytest.param(
            {"denied_roles": ["credit_analyst"]}, {}, ("not_authorised", "denied"), id="denied-role"
        ),
        pytest.param(
            {"allowed_roles": ["financial_crime"]}, {}, ("not_authorised", "role"), id="wrong-role"
        ),
        pytest.param(
            {}, {"purpose": "marketing"}, ("not_authorised", "purpose"), id="wrong-purpose"
        ),
        pytest.param({"valid_to": "2026-08-29"}, {}, ("not_applicable", "expired"), id="expired"),
        pytest.param(
            {"valid_from": "2026-08-31"}, {}, ("not_applicable", "not_yet_valid"), id="not-yet"
        ),
        pytest.param({"superseded": True}, {}, ("not_applicable", "superseded"), id="superseded"),
        pytest.param(
            {"superseded_by": "policy-v9"},
            {},
            ("not_applicable", "superseded"),
            id="superseded-outside-the-pool",
        ),
    ],
)
@pytest.mark.parametrize("entity", [ENTITY, OTHER])
def test_an_item_for_every_entity_passes_every_other_check(
    entity, overrides, request_fields, expected
):
    con = POLICY_CONTRACT
    if "purpose" in request_fields:
        con = {**POLICY_CONTRACT, "purposes": [*POLICY_CONTRACT["purposes"], "marketing"]}
    out = compile_doc(
        document(
            every_entity(**overrides),
            con=con,
            directory=DIRECTORY,
            entity=entity,
            **request_fields,
        )
    )
    assert rejection(out, "policy") == expected
    assert out.packet == ()


@pytest.mark.parametrize(
    ("entity", "directory"),
    [
        pytest.param("*", None, id="directly"),
        pytest.param("*", DIRECTORY, id="directly-with-a-directory"),
        pytest.param("everyone", {"entities": {"*": ["everyone"]}}, id="through-an-alias"),
    ],
)
def test_no_request_can_be_about_every_entity(entity, directory):
    out = compile_doc(document(every_entity(), directory=directory, entity=entity))
    assert_refused(out, "resolve", "entity_unresolved")


def test_every_entity_is_spelled_out_never_assumed():
    item = candidate("policy")
    del item["entity"]
    with pytest.raises(InvalidInput) as caught:
        load_input(document(item))
    assert "candidates[0].entity" in str(caught.value)
    with pytest.raises(InvalidInput):
        load_input(document(candidate("policy", entity="")))


def test_the_schema_documents_the_mark():
    from compiler import CompileInput

    entity = CompileInput.model_json_schema()["$defs"]["Candidate"]["properties"]["entity"]
    assert '"*"' in entity["description"]
