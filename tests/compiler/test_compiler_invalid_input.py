"""Invalid input: every problem listed at once, each with its location, before any decision."""

from __future__ import annotations

import pytest
from evidence_factories import (
    candidate,
    compile_doc,
    context_item,
    contract,
    delegation,
    document,
    proposition,
)

from compiler import InvalidInput, load_input


def errors_of(doc) -> list[dict]:
    with pytest.raises(InvalidInput) as caught:
        load_input(doc)
    errors = caught.value.errors
    for e in errors:
        assert set(e) == {"loc", "msg"}
        assert isinstance(e["loc"], list)
        assert isinstance(e["msg"], str) and e["msg"]
    return errors


def locs(errors) -> list[tuple]:
    return [tuple(e["loc"]) for e in errors]


def has(errors, loc: tuple, *words: str) -> bool:
    return any(
        tuple(e["loc"][: len(loc)]) == loc and all(w in e["msg"] for w in words) for e in errors
    )


def test_a_document_with_many_problems_lists_each_with_its_location():
    doc = document(
        candidate("a", tokens=-1),  # 0
        candidate("a", relevance=1.5),  # 1 duplicate
        candidate(
            "b",
            valid_from="2026-01-02",
            valid_to="2026-01-01",  # 2
        ),
        context_item("g1", group="g", group_required=True, requirement="required"),  # 3
        context_item(
            "g2",
            group="g",
            group_required=True,
            requirement="preferred",  # 4
            colour="red",
        ),
        candidate("c", relevance=-0.1, superseded_by="c"),  # 5
        expected_policy={"name": "strict", "version": 2},
        con=contract(policy={"mandatory_form": "richest", "on_overrun": "fail"}),
    )
    errors = errors_of(doc)
    expected = [
        (("candidates", 0, "tokens"), ()),
        (("candidates", 1, "relevance"), ()),
        (("candidates", 1, "id"), ("duplicate", "'a'")),
        (("candidates", 2), ("valid_to", "before", "valid_from")),
        (("candidates", 4, "group"), ("'g'", "requirement")),
        (("candidates", 4, "colour"), ("Extra",)),
        (("candidates", 5, "relevance"), ()),
        (("candidates", 5, "superseded_by"), ("leads back",)),
        (("request", "expected_policy"), ("strict",)),
        (("contract", "policy", "mandatory_form"), ()),
        (("contract", "policy", "on_overrun"), ()),
    ]
    for loc, words in expected:
        assert has(errors, loc, *words), (loc, errors)
    assert len(errors) == len(expected), errors


INVALID = [
    pytest.param(
        document(candidate("a"), candidate("a")), ("candidates", 1, "id"), id="duplicate-id"
    ),
    pytest.param(
        document(candidate("a", tokens=-5)), ("candidates", 0, "tokens"), id="negative-tokens"
    ),
    pytest.param(
        document(candidate("a"), token_budget=-1), ("request", "token_budget"), id="negative-budget"
    ),
    pytest.param(
        document(candidate("a", relevance=1.01)),
        ("candidates", 0, "relevance"),
        id="relevance-above-1",
    ),
    pytest.param(
        document(candidate("a", relevance=-0.01)),
        ("candidates", 0, "relevance"),
        id="relevance-below-0",
    ),
    pytest.param(
        document(candidate("a", relevance=float("nan"))),
        ("candidates", 0, "relevance"),
        id="relevance-nan",
    ),
    pytest.param(
        document(candidate("a", valid_from="2026-08-30", valid_to="2026-08-29")),
        ("candidates", 0),
        id="valid-to-before-valid-from",
    ),
    pytest.param(
        document(
            candidate("a"), delegation=delegation(valid_from="2026-08-30", valid_to="2026-08-01")
        ),
        ("request", "delegation"),
        id="delegation-valid-to-before-valid-from",
    ),
    pytest.param(
        document(
            context_item("g1", group="g", group_required=True),
            context_item("g2", group="g", requirement="discretionary"),
        ),
        ("candidates", 1, "group"),
        id="required-group-spans-two-classes",
    ),
    pytest.param(
        document(candidate("a"), expected_policy={"name": "default", "version": 2}),
        ("request", "expected_policy"),
        id="expected-policy-version-mismatch",
    ),
    pytest.param(
        document(candidate("a"), expected_policy={"name": "strict", "version": 1}),
        ("request", "expected_policy"),
        id="expected-policy-name-mismatch",
    ),
    pytest.param(
        document(candidate("a"), con=contract(policy={"mandatory_form": "fullest"})),
        ("contract", "policy", "mandatory_form"),
        id="unsupported-mandatory-form",
    ),
    pytest.param(
        document(candidate("a"), con=contract(policy={"on_overrun": "refuse"})),
        ("contract", "policy", "on_overrun"),
        id="unsupported-on-overrun",
    ),
    pytest.param(
        document(candidate("a"), con=contract(policy={"role_order": ["evidence"]})),
        ("contract", "policy", "role_order"),
        id="role-order-not-a-permutation",
    ),
    pytest.param(
        document(candidate("a"), con=contract(policy={"colour": "red"})),
        ("contract", "policy", "colour"),
        id="unknown-policy-field",
    ),
    pytest.param(
        document(candidate("a", colour="red")),
        ("candidates", 0, "colour"),
        id="unknown-candidate-field",
    ),
    pytest.param(
        document(candidate("a"), colour="red"), ("request", "colour"), id="unknown-request-field"
    ),
    pytest.param(
        {**document(candidate("a")), "colour": "red"}, ("colour",), id="unknown-top-level-field"
    ),
    pytest.param(
        document(candidate("a"), con=contract(proposition("p", "x"), proposition("p", "y"))),
        ("contract", "propositions"),
        id="duplicate-proposition-key",
    ),
    pytest.param(
        document(candidate("a"), con=contract(proposition("p", "x", max_items=0))),
        ("contract", "propositions", 0, "max_items"),
        id="max-items-zero",
    ),
    pytest.param(
        document(candidate("a", relevance=None)),
        ("candidates", 0, "relevance"),
        id="missing-required-value",
    ),
]


@pytest.mark.parametrize(("doc", "loc"), INVALID)
def test_single_problem_is_located(doc, loc):
    errors = errors_of(doc)
    assert any(tuple(e["loc"][: len(loc)]) == loc for e in errors), errors


@pytest.mark.parametrize("field", ["request", "contract", "candidates"])
def test_missing_top_level_part(field):
    doc = document(candidate("a"))
    del doc[field]
    assert (field,) in locs(errors_of(doc))


def test_missing_candidate_fields_are_each_listed():
    cand = candidate("a")
    for field in ("entity", "allowed_roles", "evidence_class", "tokens", "content"):
        del cand[field]
    errors = errors_of(document(cand))
    assert {
        ("candidates", 0, f)
        for f in ("entity", "allowed_roles", "evidence_class", "tokens", "content")
    } <= set(locs(errors))


def test_matching_expected_policy_compiles():
    doc = document(candidate("a"), expected_policy={"name": "default", "version": 1})
    assert compile_doc(doc).result == "compiled"
    doc = document(
        candidate("a"),
        expected_policy={"name": "strict", "version": 4},
        con=contract(policy={"name": "strict", "version": 4}),
    )
    assert compile_doc(doc).result == "compiled"


def test_invalid_input_serialises_as_the_design_says():
    with pytest.raises(InvalidInput) as caught:
        load_input(document(candidate("a"), candidate("a", tokens=-1)))
    as_json = caught.value.to_json()
    assert as_json["result"] == "invalid"
    assert len(as_json["errors"]) == 2


def test_model_validate_reports_field_and_cross_reference_problems_together():
    from pydantic import ValidationError

    from compiler import CompileInput

    doc = document(candidate("a", tokens=-1), candidate("a", superseded_by="a"))
    with pytest.raises(ValidationError) as caught:
        CompileInput.model_validate(doc)
    found = {tuple(e["loc"]) for e in caught.value.errors()}
    assert {
        ("candidates", 0, "tokens"),
        ("candidates", 1, "id"),
        ("candidates", 1, "superseded_by"),
    } <= found


def test_a_supersession_loop_is_invalid_input():
    from evidence_factories import candidate, document

    doc = document(
        candidate("a", superseded_by="b"),
        candidate("b", superseded_by="a"),
        candidate("c", superseded_by="c"),
    )
    with pytest.raises(InvalidInput) as caught:
        load_input(doc)
    located = {tuple(e["loc"]): e["msg"] for e in caught.value.errors}
    assert set(located) == {
        ("candidates", 0, "superseded_by"),
        ("candidates", 1, "superseded_by"),
        ("candidates", 2, "superseded_by"),
    }
    assert "supersede itself" in located[("candidates", 2, "superseded_by")]


def test_expected_policy_version_given_as_a_string_is_invalid_not_coerced():
    from evidence_factories import candidate, document, request

    doc = document(candidate("a"), req=request(expected_policy={"name": "default", "version": "1"}))
    with pytest.raises(InvalidInput) as caught:
        load_input(doc)
    # Only the type is wrong: "1" names the contract's version, so no mismatch is reported.
    assert [(e["loc"], e["msg"]) for e in caught.value.errors] == [
        (["request", "expected_policy", "version"], "Input should be a valid integer")
    ]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("tokens", "12", "Input should be a valid integer"),
        ("tokens", True, "Input should be a valid integer"),
        ("relevance", "0.5", "Input should be a valid number"),
        ("superseded", 1, "Input should be a valid boolean"),
    ],
)
def test_scalars_are_strict_lax_spellings_are_invalid_input_with_their_location(
    field, value, message
):
    from evidence_factories import candidate, document

    doc = document(candidate("a"), candidate("b", **{field: value}))
    with pytest.raises(InvalidInput) as caught:
        load_input(doc)
    assert [(e["loc"], e["msg"]) for e in caught.value.errors] == [
        (["candidates", 1, field], message)
    ]


HUGE = 2**60  # beyond RFC 8785's integers (±2**53 - 1), which the contract hash and plan id use


def test_integers_the_output_hashes_cannot_carry_are_invalid_input_not_a_crash():
    doc = document(
        candidate(
            "a", tokens=HUGE, floor=HUGE, forms=[{"rank": HUGE, "tokens": HUGE, "content": "x"}]
        ),
        con=contract(
            proposition("facility_limit", "facility_record", max_items=HUGE),
            policy={"version": HUGE},
        ),
        token_budget=HUGE,
        expected_policy={"name": "default", "version": HUGE},
    )
    errors = errors_of(doc)
    for loc in [
        ("request", "token_budget"),
        ("request", "expected_policy", "version"),
        ("contract", "policy", "version"),
        ("contract", "propositions", 0, "max_items"),
        ("candidates", 0, "tokens"),
        ("candidates", 0, "floor"),
        ("candidates", 0, "forms", 0, "rank"),
        ("candidates", 0, "forms", 0, "tokens"),
    ]:
        assert has(errors, loc, "too large"), (loc, errors)
    # the largest safe integer is still fine
    out = compile_doc(document(candidate("a"), token_budget=2**53 - 1))
    assert out.result == "compiled"
