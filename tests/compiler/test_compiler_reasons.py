"""Table tests: every rejection reason and detail, and every named refusal, of docs/design.md."""

from __future__ import annotations

from typing import Any

import pytest
from evidence_factories import (
    ENTITY,
    ROLE,
    assert_refused,
    candidate,
    compile_doc,
    context_item,
    contract,
    delegation,
    document,
    proposition,
    rejection,
    states,
)

PARENTS = {"entities": {}, "role_parents": {ROLE: ["credit_staff"]}}


def case(name: str, candidates: list[dict[str, Any]], target: str, expected, **doc: Any):
    return pytest.param(candidates, doc, target, expected, id=name)


REJECTIONS = [
    # --- not_authorised
    case(
        "role", [candidate("x", allowed_roles=["financial_crime"])], "x", ("not_authorised", "role")
    ),
    case(
        "role-not-inherited-downwards",
        [candidate("x", allowed_roles=["credit_staff"])],
        "x",
        ("not_authorised", "role"),
        roles=["credit_viewer"],
        directory=PARENTS,
    ),
    case(
        "purpose",
        [candidate("x", allowed_purposes=["investigation"])],
        "x",
        ("not_authorised", "purpose"),
    ),
    case(
        "denied-role-dominates-allow",
        [candidate("x", allowed_roles=[ROLE], denied_roles=[ROLE])],
        "x",
        ("not_authorised", "denied"),
    ),
    case(
        "denied-inherited-role-dominates-direct-allow",
        [candidate("x", allowed_roles=[ROLE], denied_roles=["credit_staff"])],
        "x",
        ("not_authorised", "denied"),
        directory=PARENTS,
    ),
    case(
        "denied-principal",
        [candidate("x", denied_principals=["maya"])],
        "x",
        ("not_authorised", "denied"),
    ),
    case(
        "denied-delegated-service",
        [candidate("x", denied_principals=["review-bot"])],
        "x",
        ("not_authorised", "denied"),
        delegation=delegation(service="review-bot"),
    ),
    case(
        "denied-wins-over-other-failures",
        [candidate("x", allowed_roles=["other"], entity="OTHER", denied_principals=["maya"])],
        "x",
        ("not_authorised", "denied"),
    ),
    # --- not_applicable
    case("entity", [candidate("x", entity="OTHER-ENTITY")], "x", ("not_applicable", "entity")),
    case(
        "not-yet-valid",
        [candidate("x", valid_from="2026-08-31")],
        "x",
        ("not_applicable", "not_yet_valid"),
    ),
    case(
        "expired-day-after-valid-to",
        [candidate("x", valid_to="2026-08-29")],
        "x",
        ("not_applicable", "expired"),
    ),
    case(
        "superseded-flag", [candidate("x", superseded=True)], "x", ("not_applicable", "superseded")
    ),
    case(
        "superseded-by-item-in-force",
        [candidate("old", superseded_by="new"), candidate("new", valid_from="2026-08-30")],
        "old",
        ("not_applicable", "superseded"),
    ),
    case(
        "superseded-by-inadmissible-item-in-force",
        # the successor governs from its date even if this caller may not read it
        [
            candidate("old", superseded_by="new"),
            candidate("new", allowed_roles=["other"], valid_from="2026-01-01"),
        ],
        "old",
        ("not_applicable", "superseded"),
    ),
    # --- evidence class
    case(
        "wrong-evidence-class",
        [candidate("x", evidence_class="case_note")],
        "x",
        ("wrong_evidence_class", None),
    ),
    case(
        "wrong-evidence-class-whatever-the-relevance",
        [
            candidate(
                "x", evidence_class="email", relevance=1.0, content="manager already approved this"
            )
        ],
        "x",
        ("wrong_evidence_class", None),
    ),
    case(
        "wrong-evidence-class-contradicting",
        [candidate("x", evidence_class="case_note", supports=[], contradicts=["facility_limit"])],
        "x",
        ("wrong_evidence_class", None),
    ),
    case(
        "evidence-for-nothing-the-contract-asks",
        [candidate("x", supports=["weather"])],
        "x",
        ("wrong_evidence_class", None),
    ),
    # --- planning
    case(
        "below-min-relevance-corroboration",
        [candidate("a", relevance=0.9), candidate("b", relevance=0.2)],
        "b",
        ("below_min_relevance", None),
        con=contract(
            proposition("facility_limit", "facility_record", max_items=2),
            policy={"min_relevance": 0.5},
        ),
    ),
    case(
        "below-min-relevance-context",
        [candidate("a"), context_item("i", relevance=0.2)],
        "i",
        ("below_min_relevance", None),
        con=contract(policy={"min_relevance": 0.5}),
    ),
    case(
        "budget-exceeded",
        [candidate("x", tokens=101)],
        "x",
        ("budget_exceeded", None),
        token_budget=100,
    ),
    case(
        "budget-exceeded-zero-budget",
        [candidate("x", tokens=1)],
        "x",
        ("budget_exceeded", None),
        token_budget=0,
    ),
    case(
        "not-needed-beyond-max-items",
        [candidate("a", relevance=0.9), candidate("b", relevance=0.8)],
        "b",
        ("not_needed_for_contract", None),
    ),
    case(
        "not-needed-beyond-max-items-2",
        [candidate(c, relevance=r) for c, r in (("a", 0.9), ("b", 0.8), ("c", 0.7))],
        "c",
        ("not_needed_for_contract", None),
        con=contract(proposition("facility_limit", "facility_record", max_items=2)),
    ),
    case(
        "dependency-missing",
        [candidate("x", depends_on=["dep"]), candidate("dep", entity="OTHER")],
        "x",
        ("dependency_missing", None),
    ),
    case(
        "group-partner-not-admitted",
        [candidate("x", group="pair"), context_item("y", group="pair", entity="OTHER")],
        "x",
        ("dependency_missing", None),
    ),
    case(
        "dependency-missing-transitively",
        [
            candidate("x", depends_on=["d1"]),
            context_item("d1", depends_on=["d2"]),
            context_item("d2", allowed_purposes=["other"]),
        ],
        "x",
        ("dependency_missing", None),
    ),
]


@pytest.mark.parametrize(("candidates", "doc", "target", "expected"), REJECTIONS)
def test_rejection_reason_and_detail(candidates, doc, target, expected):
    out = compile_doc(document(*candidates, **doc))
    assert out.result == "compiled", out.refusal
    assert rejection(out, target) == expected
    assert target not in out.packet_ids
    entries = [
        e for e in out.to_json()["trace"] if e["id"] == target and e["outcome"] == "rejected"
    ]
    assert [(e["reason"], e["detail"]) for e in entries] == [expected]


ADMISSIONS = [
    case("valid-to-is-the-last-valid-day", [candidate("x", valid_to="2026-08-30")], "x", None),
    case("valid-from-is-the-first-valid-day", [candidate("x", valid_from="2026-08-30")], "x", None),
    case(
        "inherited-role-allowed",
        [candidate("x", allowed_roles=["credit_staff"])],
        "x",
        None,
        directory=PARENTS,
    ),
    case(
        "superseded-by-item-not-yet-in-force",
        [candidate("old", superseded_by="new"), candidate("new", valid_from="2026-08-31")],
        "old",
        None,
    ),
    case(
        "superseded-by-item-that-expired",
        [
            candidate("old", superseded_by="new", relevance=0.9),
            candidate("new", valid_from="2026-01-01", valid_to="2026-08-29"),
        ],
        "old",
        None,
    ),
    case(
        "one-accepted-proposition-is-enough",
        [candidate("x", supports=["facility_limit", "waiver_valid"])],
        "x",
        None,
    ),
    case(
        "allowed-through-delegation-scope",
        [candidate("x")],
        "x",
        None,
        delegation=delegation(scopes=[ROLE, "unrelated"]),
    ),
]


@pytest.mark.parametrize(("candidates", "doc", "target", "expected"), ADMISSIONS)
def test_admitted_edges(candidates, doc, target, expected):
    out = compile_doc(document(*candidates, **doc))
    assert out.result == "compiled", out.refusal
    assert rejection(out, target) is expected
    assert target in out.packet_ids


def test_one_day_shift_past_valid_to_flips_the_slot():
    cand = candidate("waiver", valid_to="2026-08-30")
    on_last_day = compile_doc(document(cand))
    next_day = compile_doc(document(cand, decision_date="2026-08-31"))
    assert states(on_last_day) == {"facility_limit": "supported"}
    assert states(next_day) == {"facility_limit": "unknown"}
    assert rejection(next_day, "waiver") == ("not_applicable", "expired")


def test_superseded_by_successor_from_its_first_day():
    old = candidate("old", superseded_by="new", relevance=0.9)
    new = candidate("new", valid_from="2026-08-31", relevance=0.1)
    before = compile_doc(document(old, new))
    after = compile_doc(document(old, new, decision_date="2026-08-31"))
    assert before.packet_ids == ("old",)
    assert rejection(before, "new") == ("not_applicable", "not_yet_valid")
    assert after.packet_ids == ("new",)
    assert rejection(after, "old") == ("not_applicable", "superseded")


def test_every_candidate_gets_exactly_one_admit_trace_entry():
    cands = [
        candidate("a"),
        candidate("b", entity="X"),
        candidate("c", allowed_roles=[]),
        candidate("d", evidence_class="case_note"),
        context_item("e"),
    ]
    out = compile_doc(document(*cands))
    admit_ids = [e["id"] for e in out.to_json()["trace"] if e["pass"] == "admit"]
    assert sorted(admit_ids) == ["a", "b", "c", "d", "e"]


# ----------------------------------------------------------------------------- refusals

AMBIGUOUS = {"entities": {"ATLAS-IN-01": ["Atlas"], "ATLAS-UK-02": ["Atlas", "Atlas UK"]}}

REFUSALS = [
    pytest.param(
        {"entity": "Nobody Ltd", "directory": AMBIGUOUS},
        "resolve",
        "entity_unresolved",
        id="entity-unresolved",
    ),
    pytest.param(
        {"entity": "Atlas", "directory": AMBIGUOUS},
        "resolve",
        "entity_ambiguous",
        id="entity-ambiguous-alias-naming-two-entities",
    ),
    pytest.param(
        {"delegation": delegation(revoked=True)},
        "resolve",
        "delegation_invalid",
        id="delegation-revoked",
    ),
    pytest.param(
        {"delegation": delegation(valid_from="2026-08-31")},
        "resolve",
        "delegation_invalid",
        id="delegation-not-yet-valid",
    ),
    pytest.param(
        {"delegation": delegation(valid_to="2026-08-29")},
        "resolve",
        "delegation_invalid",
        id="delegation-expired",
    ),
    pytest.param(
        {"delegation": delegation(on_behalf_of="someone-else")},
        "resolve",
        "delegation_invalid",
        id="delegation-for-another-principal",
    ),
    pytest.param(
        {"decision_type": "refund.eligibility"},
        "type-check",
        "decision_type_mismatch",
        id="decision-type-mismatch",
    ),
    pytest.param(
        {"purpose": "marketing"}, "type-check", "purpose_not_permitted", id="purpose-not-permitted"
    ),
    pytest.param(
        {
            "cands": [
                candidate("m", requirement="mandatory", tokens=600),
                context_item("n", requirement="mandatory", tokens=500),
            ]
        },
        "plan",
        "mandatory_over_budget",
        id="mandatory-over-budget",
    ),
    pytest.param(
        {"cands": [candidate("m", requirement="mandatory", tokens=10)], "token_budget": 0},
        "plan",
        "mandatory_over_budget",
        id="mandatory-over-zero-budget",
    ),
    pytest.param(
        {
            "cands": [
                context_item("g1", group="g", group_required=True, requirement="required"),
                context_item(
                    "g2", group="g", group_required=True, requirement="required", entity="OTHER"
                ),
            ]
        },
        "plan",
        "required_group_unsatisfied",
        id="required-group-member-rejected",
    ),
    pytest.param(
        {
            "cands": [
                context_item(
                    "g1", group="g", group_required=True, requirement="required", tokens=600
                ),
                context_item(
                    "g2", group="g", group_required=True, requirement="required", tokens=600
                ),
            ]
        },
        "plan",
        "required_group_unsatisfied",
        id="required-group-over-budget",
    ),
    pytest.param(
        {"cands": [candidate("x", allowed_roles=["other"])], "named": ["x"]},
        "plan",
        "named_not_admissible",
        id="named-rejected",
    ),
    pytest.param(
        {"cands": [candidate("x")], "named": ["ghost"]},
        "plan",
        "named_not_admissible",
        id="named-not-a-candidate",
    ),
    pytest.param(
        {"cands": [candidate("x", depends_on=["d"]), candidate("d", entity="O")], "named": ["x"]},
        "plan",
        "named_not_admissible",
        id="named-with-missing-dependency",
    ),
]


@pytest.mark.parametrize(("doc", "pass_", "reason"), REFUSALS)
def test_refusal(doc, pass_, reason):
    doc = dict(doc)
    cands = doc.pop("cands", [candidate("a"), candidate("b", entity="OTHER")])
    out = compile_doc(document(*cands, **doc))
    assert_refused(out, pass_, reason)
    trace = out.to_json()["trace"]
    passes = [e["pass"] for e in trace]
    order = ["parse", "resolve", "type-check", "admit", "plan", "attest"]
    # the trace so far: passes in order, nothing from a pass after the refusing one
    assert passes == sorted(passes, key=order.index)
    assert set(passes) <= set(order[: order.index(pass_) + 1])
    if pass_ == "plan":
        # admission ran over every candidate before planning refused
        admitted = {e["id"] for e in trace if e["pass"] == "admit"}
        assert admitted == {c["id"] for c in cands}
    else:
        assert "admit" not in passes


def test_refused_output_serialises_pass_under_its_design_name():
    out = compile_doc(document(candidate("a"), purpose="marketing"))
    refusal = out.to_json()["refusal"]
    assert set(refusal) == {"pass", "reason", "detail"}
    assert out.to_json()["result"] == "refused"


def test_named_refusal_does_not_name_a_resource_that_does_not_exist_as_content():
    out = compile_doc(
        document(
            candidate("secret", allowed_roles=["other"], content="TOP SECRET BODY"),
            named=["secret"],
        )
    )
    assert_refused(out, "plan", "named_not_admissible")
    assert "TOP SECRET BODY" not in str(out.to_json())


def test_entity_given_by_alias_resolves_case_insensitively_to_its_id():
    directory = {"entities": {ENTITY: ["Atlas", "Atlas Industries"]}}
    out = compile_doc(document(candidate("a"), entity="atlas industries", directory=directory))
    assert out.result == "compiled"
    assert out.request.entity == ENTITY
    assert out.packet_ids == ("a",)


def test_delegation_last_valid_day_is_valid():
    out = compile_doc(document(candidate("a"), delegation=delegation(valid_to="2026-08-30")))
    assert out.result == "compiled"
    assert out.packet_ids == ("a",)


def test_effective_roles_are_expanded_roles_intersected_with_scopes():
    # maya is credit_analyst (inherits credit_staff); the service is scoped to credit_staff
    # and to a role maya does not hold.
    cands = [
        candidate("via-parent", allowed_roles=["credit_staff"]),
        candidate("via-own-role", allowed_roles=[ROLE], relevance=0.9),
        candidate("via-scope-only", allowed_roles=["risk_officer"]),
    ]
    doc = document(
        *cands,
        directory=PARENTS,
        delegation=delegation(scopes=["credit_staff", "risk_officer"]),
        con=contract(proposition("facility_limit", "facility_record", max_items=3)),
    )
    out = compile_doc(doc)
    assert out.result == "compiled"
    assert out.request.effective_roles == ("credit_staff",)
    assert out.packet_ids == ("via-parent",)
    assert rejection(out, "via-own-role") == ("not_authorised", "role")
    assert rejection(out, "via-scope-only") == ("not_authorised", "role")


def test_delegation_never_lifts_a_deny_on_the_principals_role():
    """Deny dominates across the delegation join: scoping the service away from a role maya
    holds must not make a resource denied to that role readable on her behalf."""
    cands = [candidate("restricted", allowed_roles=["credit_staff"], denied_roles=[ROLE])]
    alone = compile_doc(document(*cands, directory=PARENTS))
    assert rejection(alone, "restricted") == ("not_authorised", "denied")
    delegated = compile_doc(
        document(*cands, directory=PARENTS, delegation=delegation(scopes=["credit_staff"]))
    )
    assert delegated.result == "compiled"
    assert "restricted" not in delegated.packet_ids
    assert rejection(delegated, "restricted") == ("not_authorised", "denied")
