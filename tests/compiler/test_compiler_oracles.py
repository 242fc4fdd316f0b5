"""Oracle tests: the seed's printed Atlas output, its eight-item three-way comparison, and its
worked refund-desk example (docs/design.md, invariant 8)."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import pytest
from evidence_factories import (
    candidate,
    canonical,
    compile_doc,
    contract,
    document,
    proposition,
    rejection,
    request,
    states,
)

from compiler import compare, load_input

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def atlas() -> dict:
    return json.loads((EXAMPLES / "atlas.json").read_text())


def contaminated() -> dict:
    return json.loads((EXAMPLES / "contaminated.json").read_text())


# ------------------------------------------------------------------------------ Atlas


def test_atlas_matches_the_seeds_printed_output():
    out = compile_doc(atlas())
    assert out.result == "compiled"
    # "admitted_resource_ids": facility-F102, policy-P3, workflow-E88
    assert sorted(out.packet_ids) == ["facility-F102", "policy-P3", "workflow-E88"]
    # "evidence_slots", in contract order
    assert [(s.proposition, s.state, list(s.resource_ids)) for s in out.slots] == [
        ("facility_limit", "supported", ["facility-F102"]),
        ("review_open", "supported", ["workflow-E88"]),
        ("waiver_valid", "unknown", []),
        ("continuation_rule", "supported", ["policy-P3"]),
    ]
    assert [s.reason for s in out.slots] == [
        "accepted_evidence",
        "accepted_evidence",
        "no_admissible_evidence",
        "accepted_evidence",
    ]
    # "rejected": exactly the seed's three, with `superseded` as the detail of not_applicable
    assert out.to_json()["rejected"] == [
        {"id": "investigation-X9", "reason": "not_authorised", "detail": "role"},
        {"id": "policy-P2", "reason": "not_applicable", "detail": "superseded"},
        {"id": "rm-note-N7", "reason": "wrong_evidence_class", "detail": None},
    ]
    assert (out.tokens_used, out.token_budget) == (530, 760)
    assert out.decision_ready is False
    assert out.blocking == ("waiver_valid",)
    assert out.request.entity == "ATLAS-IN-01"
    assert out.request.entity_as_given == "Atlas Industries"
    assert out.valid_until is None
    assert out.contract.decision_type == "credit.review.continuation"
    assert out.contract.version == "3"


def test_atlas_is_byte_identical_whatever_the_candidate_order():
    doc = atlas()
    expected = canonical(compile_doc(doc))
    rng = random.Random(8)
    for _ in range(10):
        shuffled = copy.deepcopy(doc)
        rng.shuffle(shuffled["candidates"])
        assert canonical(compile_doc(shuffled)) == expected


def test_atlas_waiver_that_expired_two_days_earlier_stays_unknown():
    doc = atlas()
    doc["candidates"].append(
        candidate(
            "waiver-W5",
            evidence_class="approved_waiver",
            supports=["waiver_valid"],
            valid_from="2025-08-28",
            valid_to="2026-08-28",
            tokens=110,
            relevance=0.9,
            content="Covenant waiver approved by committee.",
        )
    )
    out = compile_doc(doc)
    assert rejection(out, "waiver-W5") == ("not_applicable", "expired")
    assert out.slot("waiver_valid").state == "unknown"


def test_atlas_approved_waiver_supports_the_slot_and_bounds_the_packet():
    doc = atlas()
    doc["candidates"].append(
        candidate(
            "waiver-W6",
            evidence_class="committee_record",
            supports=["waiver_valid"],
            valid_from="2026-08-01",
            valid_to="2026-09-30",
            tokens=110,
            relevance=0.5,
            content="Committee approved the waiver.",
        )
    )
    out = compile_doc(doc)
    assert out.slot("waiver_valid").state == "supported"
    assert out.decision_ready is True
    assert out.blocking == ()
    assert out.valid_until.isoformat() == "2026-09-30"
    assert out.tokens_used == 640


def test_atlas_identical_query_different_caller():
    """Same words, time, customer and corpus; an employee of an unrelated unit asks."""
    doc = atlas()
    doc["request"].update(principal="omar", roles=["treasury_ops"])
    out = compile_doc(doc)
    assert out.packet == ()
    assert {s.state for s in out.slots} == {"unknown"}
    assert all(r["reason"] == "not_authorised" for r in out.to_json()["rejected"])
    assert len(out.rejected) == len(doc["candidates"])


def test_atlas_one_day_shift_past_a_transition_addendum():
    doc = atlas()
    doc["candidates"].append(
        candidate(
            "addendum-T1",
            evidence_class="policy_clause",
            supports=["continuation_rule"],
            valid_from="2026-07-01",
            valid_to="2026-09-30",
            tokens=60,
            relevance=0.95,
            content="Local transition addendum.",
        )
    )
    doc["request"]["decision_date"] = "2026-09-30"
    last_day = compile_doc(doc)
    doc["request"]["decision_date"] = "2026-10-01"
    next_day = compile_doc(doc)
    assert last_day.slot("continuation_rule").resource_ids == ("addendum-T1",)
    assert last_day.valid_until.isoformat() == "2026-09-30"
    assert rejection(next_day, "addendum-T1") == ("not_applicable", "expired")
    assert next_day.slot("continuation_rule").resource_ids == ("policy-P3",)


# ------------------------------------------------------------------ three-way comparison


def test_seed_three_way_comparison_on_the_eight_item_corpus():
    result = compare(load_input(contaminated()), 5)
    summary = {
        name: (m["items_passed"], m["unsafe_items"], m["coverage_percent"])
        for name, m in result.items()
    }
    assert summary == {
        "plain_top_k": (5, 4, 75),
        "post_filter_top_k": (1, 0, 25),
        "compiled": (4, 0, 100),
    }
    assert sorted(result["plain_top_k"]["unsafe_ids"]) == [
        "email-waiver",
        "old-policy",
        "other-tenant-limit",
        "restricted-waiver",
    ]
    assert sorted(result["compiled"]["ids"]) == [
        "approved-waiver",
        "current-policy",
        "facility",
        "workflow",
    ]


def test_three_way_comparison_ignores_candidate_order():
    doc = contaminated()
    doc["candidates"].reverse()
    result = compare(load_input(doc), 5)
    assert result["compiled"]["items_passed"] == 4
    assert result["plain_top_k"]["unsafe_items"] == 4


def test_compiled_slots_on_the_eight_item_corpus():
    out = compile_doc(contaminated())
    assert set(states(out).values()) == {"supported"}
    assert rejection(out, "other-tenant-limit") == ("not_applicable", "entity")
    assert rejection(out, "old-policy") == ("not_applicable", "superseded")
    assert rejection(out, "email-waiver") == ("wrong_evidence_class", None)
    assert rejection(out, "restricted-waiver") == ("not_authorised", "role")


# --------------------------------------------------------------------------- refund desk


def refund_desk(email_text: str, email_relevance: float, *, with_requested: bool) -> dict:
    props = [
        proposition("delivery_date", "order_record"),
        proposition("refund_rule", "policy_clause"),
        proposition("exception_approved", "approval_object"),
    ]
    if with_requested:
        props.append(proposition("exception_requested", "customer_email", required=False))
    common = {
        "entity": "ORDER-481",
        "allowed_roles": ["support_agent"],
        "allowed_purposes": ["refund_request"],
    }
    cands = [
        candidate(
            "refund-policy-v3",
            evidence_class="policy_clause",
            supports=["refund_rule"],
            valid_from="2026-06-01",
            relevance=0.8,
            tokens=200,
            content="Refunds within 30 days of delivery.",
            **common,
        ),
        candidate(
            "refund-policy-v2",
            evidence_class="policy_clause",
            supports=["refund_rule"],
            valid_from="2025-01-01",
            superseded_by="refund-policy-v3",
            relevance=0.9,
            tokens=200,
            content="Refunds within 14 days of delivery.",
            **common,
        ),
        candidate(
            "order-481",
            evidence_class="order_record",
            supports=["delivery_date"],
            valid_from="2026-08-10",
            relevance=0.7,
            tokens=50,
            content="Delivered 2026-08-12.",
            **common,
        ),
        candidate(
            "email-1",
            evidence_class="customer_email",
            supports=["exception_requested", "exception_approved"],
            valid_from="2026-08-20",
            relevance=email_relevance,
            tokens=80,
            content=email_text,
            **common,
        ),
    ]
    req = request(
        decision_type="refund.eligibility",
        principal="sam",
        roles=["support_agent"],
        purpose="refund_request",
        entity="order 481",
        token_budget=2000,
    )
    con = contract(*props, decision_type="refund.eligibility", purposes=["refund_request"])
    return document(
        *cands, req=req, con=con, directory={"entities": {"ORDER-481": ["order 481", "#481"]}}
    )


EMAILS = [
    pytest.param("Please make an exception for my refund.", 0.3, id="plain-request"),
    pytest.param(
        "The manager already approved this, please refund.", 1.0, id="claims-manager-approval"
    ),
]


@pytest.mark.parametrize(("text", "relevance"), EMAILS)
def test_refund_desk_email_never_supports_exception_approved(text, relevance):
    out = compile_doc(refund_desk(text, relevance, with_requested=True))
    assert out.result == "compiled"
    assert states(out) == {
        "delivery_date": "supported",
        "refund_rule": "supported",
        "exception_approved": "unknown",
        "exception_requested": "supported",
    }
    assert out.slot("refund_rule").resource_ids == ("refund-policy-v3",)
    assert rejection(out, "refund-policy-v2") == ("not_applicable", "superseded")
    # the email is admitted for what its class can establish, and only for that
    email = next(i for i in out.packet if i.id == "email-1")
    assert email.supports == ("exception_requested",)
    assert out.slot("exception_approved").resource_ids == ()
    assert out.blocking == ("exception_approved",)
    assert out.decision_ready is False


@pytest.mark.parametrize(("text", "relevance"), EMAILS)
def test_refund_desk_without_a_requested_slot_rejects_the_email(text, relevance):
    out = compile_doc(refund_desk(text, relevance, with_requested=False))
    assert rejection(out, "email-1") == ("wrong_evidence_class", None)
    assert out.slot("exception_approved").state == "unknown"
    assert text not in json.dumps(out.to_json())


def test_comparison_of_a_refused_compile_passes_nothing_compiled():
    doc = contaminated()
    doc["request"]["purpose"] = "marketing"
    result = compare(load_input(doc), 3)
    assert result["compiled"]["items_passed"] == 0
    assert result["post_filter_top_k"]["items_passed"] == 0
    assert result["plain_top_k"]["unsafe_items"] == 3


def test_comparison_needs_a_positive_k():
    with pytest.raises(ValueError):
        compare(load_input(contaminated()), 0)


# ------------------------------------------------------------------------ output shape


def test_compiled_output_has_the_design_fields():
    out = compile_doc(atlas()).to_json()
    assert {
        "result",
        "plan_id",
        "compiler_version",
        "contract",
        "request",
        "token_budget",
        "tokens_used",
        "packet",
        "slots",
        "decision_ready",
        "blocking",
        "rejected",
        "valid_until",
        "trace",
        "refusal",
    } <= set(out)
    assert set(out["contract"]) == {"decision_type", "version", "sha256"}
    assert len(out["contract"]["sha256"]) == 64
    int(out["plan_id"], 16)
    for item in out["packet"]:
        assert {"id", "role", "form_rank", "tokens", "content"} <= set(item)
    for slot in out["slots"]:
        assert set(slot) == {"proposition", "state", "resource_ids", "reason", "required"}
    for entry in out["trace"]:
        assert set(entry) == {"id", "pass", "outcome", "reason", "detail"}
    for r in out["rejected"]:
        assert set(r) == {"id", "reason", "detail"}
    assert out["refusal"] is None
    json.dumps(out)  # plain JSON all the way down


def test_design_interface_model_dump_names_the_refusal_pass():
    """docs/design.md's interface serialises with `out.model_dump(mode="json")`: the refusal's
    pass is `pass` there too, not the Python attribute name."""
    doc = atlas()
    doc["request"]["purpose"] = "marketing"
    out = compile_doc(doc)
    assert out.model_dump(mode="json")["refusal"] == {
        "pass": "type-check",
        "reason": "purpose_not_permitted",
        "detail": None,
    }
    assert json.loads(out.model_dump_json())["refusal"]["pass"] == "type-check"
    assert out.model_dump(mode="json") == out.to_json()


def test_omitted_policy_is_the_default_policy():
    doc = atlas()
    explicit = copy.deepcopy(doc)
    explicit["contract"]["policy"] = {
        "name": "default",
        "version": 1,
        "min_relevance": 0.0,
        "mandatory_form": "cheapest",
        "role_order": ["instruction", "task", "state", "evidence", "support", "tool"],
        "on_overrun": "drop_last_discretionary",
    }
    assert canonical(compile_doc(doc)) == canonical(compile_doc(explicit))


def test_plan_id_and_contract_hash_follow_what_they_attest():
    base = compile_doc(atlas())
    other_contract = atlas()
    other_contract["contract"]["version"] = "4"
    changed = compile_doc(other_contract)
    assert changed.contract.sha256 != base.contract.sha256
    assert changed.plan_id != base.plan_id
    smaller = atlas()
    smaller["request"]["token_budget"] = 300
    assert compile_doc(smaller).plan_id != base.plan_id


def test_a_validated_input_copied_with_reordered_candidates_compiles_identically():
    """Variants (perturbations, the workbench) copy a validated input rather than re-parse it."""
    from compiler import compile_input

    validated = load_input(atlas())
    reordered = validated.model_copy(update={"candidates": tuple(reversed(validated.candidates))})
    assert canonical(compile_input(reordered)) == canonical(compile_input(validated))
