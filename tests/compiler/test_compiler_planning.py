"""Planning rules of docs/design.md ("Planning, in order of obligation"), valid_until, and the
rule that traces and rejections never carry rejected content."""

from __future__ import annotations

import json

import pytest
from evidence_factories import (
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

A = proposition("a", "rec")
B = proposition("b", "rec")


def ev(cid: str, *supports: str, **kw):
    return candidate(
        cid, evidence_class=kw.pop("evidence_class", "rec"), supports=list(supports), **kw
    )


def trace_of(out, cid):
    return [e for e in out.to_json()["trace"] if e["id"] == cid]


# ------------------------------------------------------------------- order of obligation


def test_mandatory_items_take_the_budget_first():
    out = compile_doc(
        document(
            ev("s", "a", tokens=60, relevance=1.0),
            context_item("rules", requirement="mandatory", tokens=50, relevance=0.0),
            con=contract(A),
            token_budget=100,
        )
    )
    assert out.packet_ids == ("rules",)
    assert rejection(out, "s") == ("budget_exceeded", None)
    assert out.slot("a").state == "unknown"
    assert out.slot("a").reason == "evidence_over_budget"


def test_required_propositions_in_contract_order_before_optional_ones():
    con = contract(
        proposition("first", "rec"),
        proposition("opt", "rec", required=False),
        proposition("second", "rec"),
    )
    out = compile_doc(
        document(
            ev("o", "opt", tokens=50, relevance=1.0),
            ev("f", "first", tokens=50, relevance=0.1),
            ev("s", "second", tokens=50, relevance=0.2),
            con=con,
            token_budget=100,
        )
    )
    assert set(out.packet_ids) == {"f", "s"}
    assert rejection(out, "o") == ("budget_exceeded", None)
    assert states(out) == {"first": "supported", "opt": "unknown", "second": "supported"}
    # an optional proposition never blocks
    assert out.blocking == ()
    assert out.decision_ready is True


def test_contract_order_decides_when_only_one_fits():
    con = contract(proposition("first", "rec"), proposition("second", "rec"))
    out = compile_doc(
        document(
            ev("s", "second", relevance=1.0),
            ev("f", "first", relevance=0.1),
            con=con,
            token_budget=100,
        )
    )
    assert out.packet_ids == ("f",)
    assert states(out) == {"first": "supported", "second": "unknown"}
    assert out.slot("second").reason == "evidence_over_budget"
    assert out.blocking == ("second",)


def test_best_contradiction_comes_before_corroboration():
    con = contract(proposition("a", "rec", max_items=3))
    out = compile_doc(
        document(
            ev("s1", "a", relevance=0.9),
            ev("s2", "a", relevance=0.8),
            candidate("c1", evidence_class="rec", supports=[], contradicts=["a"], relevance=0.1),
            con=con,
            token_budget=200,
        )
    )
    assert set(out.packet_ids) == {"s1", "c1"}
    assert out.slot("a").state == "contradicted"
    assert out.slot("a").reason == "sources_disagree"
    assert out.slot("a").resource_ids == ("s1", "c1")
    assert rejection(out, "s2") == ("budget_exceeded", None)


def test_primary_evidence_of_every_required_proposition_before_corroboration():
    con = contract(proposition("a", "rec", max_items=2), B)
    out = compile_doc(
        document(
            ev("a1", "a", relevance=0.9),
            ev("a2", "a", relevance=0.8),
            ev("b1", "b", relevance=0.1),
            con=con,
            token_budget=200,
        )
    )
    assert set(out.packet_ids) == {"a1", "b1"}
    wide = compile_doc(
        document(
            ev("a1", "a", relevance=0.9),
            ev("a2", "a", relevance=0.8),
            ev("b1", "b", relevance=0.1),
            con=con,
            token_budget=300,
        )
    )
    assert set(wide.packet_ids) == {"a1", "a2", "b1"}
    assert wide.slot("a").resource_ids == ("a1", "a2")


def test_primary_evidence_of_every_optional_proposition_before_its_corroboration():
    """Step 3's "then the same for propositions that are not required" repeats steps 2 and 3 in
    their order: every optional proposition gets its best item before any is corroborated."""
    con = contract(
        proposition("a", "rec", max_items=2, required=False),
        proposition("b", "rec", required=False),
    )
    out = compile_doc(
        document(
            ev("a1", "a", relevance=0.9),
            ev("a2", "a", relevance=0.8),
            ev("b1", "b", relevance=0.1),
            con=con,
            token_budget=200,
        )
    )
    assert set(out.packet_ids) == {"a1", "b1"}
    assert states(out) == {"a": "supported", "b": "supported"}
    assert rejection(out, "a2") == ("budget_exceeded", None)


def test_evidence_beyond_max_items_does_not_fill_the_window():
    out = compile_doc(
        document(
            *(ev(f"s{i}", "a", relevance=i / 10) for i in range(5)),
            con=contract(A),
            token_budget=10_000,
        )
    )
    assert out.packet_ids == ("s4",)
    for i in range(4):
        assert rejection(out, f"s{i}") == ("not_needed_for_contract", None)
    assert out.tokens_used == 100


def test_context_items_by_requirement_class_after_evidence():
    out = compile_doc(
        document(
            ev("s", "a", tokens=100, relevance=0.1),
            context_item("req", requirement="required", tokens=50, relevance=0.1),
            context_item("pref-hi", requirement="preferred", tokens=50, relevance=0.9),
            context_item("pref-lo", requirement="preferred", tokens=50, relevance=0.8),
            context_item("disc", requirement="discretionary", tokens=10, relevance=1.0),
            con=contract(A),
            token_budget=200,
        )
    )
    assert set(out.packet_ids) == {"s", "req", "pref-hi"}
    assert rejection(out, "pref-lo") == ("budget_exceeded", None)
    assert rejection(out, "disc") == ("budget_exceeded", None)


# ------------------------------------------------------------------ precedence & ranking


def test_precedence_of_accepted_classes_beats_relevance():
    con = contract(proposition("waiver_valid", "approved_waiver", "committee_record"))
    out = compile_doc(
        document(
            ev("committee", "waiver_valid", evidence_class="committee_record", relevance=0.99),
            ev(
                "waiver",
                "waiver_valid",
                evidence_class="approved_waiver",
                relevance=0.01,
                tokens=500,
            ),
            con=con,
        )
    )
    assert out.packet_ids == ("waiver",)
    assert out.slot("waiver_valid").resource_ids == ("waiver",)
    assert rejection(out, "committee") == ("not_needed_for_contract", None)


@pytest.mark.parametrize(
    ("cands", "winner"),
    [
        ([ev("x", "a", relevance=0.4), ev("y", "a", relevance=0.6)], "y"),
        ([ev("x", "a", relevance=0.5, tokens=90), ev("y", "a", relevance=0.5, tokens=80)], "y"),
        ([ev("y", "a", relevance=0.5, tokens=80), ev("x", "a", relevance=0.5, tokens=80)], "x"),
    ],
    ids=["relevance", "fewer-tokens", "then-id"],
)
def test_ties_break_on_relevance_then_tokens_then_id(cands, winner):
    out = compile_doc(document(*cands, con=contract(A)))
    assert out.packet_ids == (winner,)


# ------------------------------------------------------------------- contradiction kept


CONTRA = {"evidence_class": "rec", "supports": [], "contradicts": ["a"]}


@pytest.mark.parametrize(
    "contra",
    [
        pytest.param(candidate("c", tokens=5000, **CONTRA), id="contradictor-over-budget"),
        pytest.param(candidate("c", relevance=0.0, **CONTRA), id="contradictor-ranks-lowest"),
        pytest.param(
            candidate("c", relevance=0.0, depends_on=["gone"], **CONTRA),
            id="contradictor-blocked-by-dependency",
        ),
    ],
)
def test_admissible_contradiction_is_never_hidden(contra):
    cands = [ev("s", "a", relevance=1.0), contra]
    if contra.get("depends_on"):
        cands.append(context_item("gone", entity="OTHER"))
    out = compile_doc(
        document(*cands, con=contract(A, policy={"min_relevance": 0.5}), token_budget=150)
    )
    assert out.slot("a").state == "contradicted"
    assert out.slot("a").reason == "sources_disagree"
    assert "s" in out.packet_ids
    assert "c" not in out.packet_ids
    assert out.slot("a").resource_ids == ("s",)
    assert out.blocking == ("a",)


def test_contradiction_visible_with_zero_budget():
    out = compile_doc(
        document(ev("s", "a"), candidate("c", **CONTRA), con=contract(A), token_budget=0)
    )
    assert out.packet == ()
    assert out.slot("a").state == "contradicted"


def test_contradiction_alone_is_contradicted():
    out = compile_doc(document(candidate("c", **CONTRA), con=contract(A)))
    assert out.slot("a").state == "contradicted"
    assert out.slot("a").resource_ids == ("c",)


def test_weak_class_contradiction_does_not_demote_and_is_rejected():
    weak = candidate(
        "gossip", evidence_class="email", supports=[], contradicts=["a"], relevance=1.0
    )
    out = compile_doc(document(ev("s", "a"), weak, con=contract(A)))
    assert out.slot("a").state == "supported"
    assert rejection(out, "gossip") == ("wrong_evidence_class", None)


def test_inadmissible_contradiction_does_not_count():
    out = compile_doc(
        document(ev("s", "a"), candidate("c", entity="OTHER", **CONTRA), con=contract(A))
    )
    assert out.slot("a").state == "supported"


# ------------------------------------------------------------------------------- forms

FORMS = [
    {"rank": 0, "tokens": 20, "content": "SUMMARY"},
    {"rank": 1, "tokens": 50, "content": "EXCERPT"},
]


@pytest.mark.parametrize(
    ("budget", "floor", "rank", "content"),
    [
        (1000, None, 2, "FULL"),
        (199, None, 1, "EXCERPT"),
        (49, None, 0, "SUMMARY"),
        (49, 1, None, None),
        (200, 2, 2, "FULL"),
        (19, None, None, None),
    ],
)
def test_highest_ranked_form_that_fits_never_below_floor(budget, floor, rank, content):
    item = ev("s", "a", tokens=200, content="FULL", forms=FORMS)
    if floor is not None:
        item["floor"] = floor
    out = compile_doc(document(item, con=contract(A), token_budget=budget))
    if rank is None:
        assert out.packet == ()
        assert rejection(out, "s") == ("budget_exceeded", None)
        return
    (placed,) = out.packet
    assert (placed.form_rank, placed.content) == (rank, content)
    assert placed.tokens == out.tokens_used <= budget


@pytest.mark.parametrize(("floor", "rank", "tokens"), [(None, 0, 20), (1, 1, 50)])
def test_mandatory_items_take_the_cheapest_allowed_form(floor, rank, tokens):
    item = ev("s", "a", tokens=200, content="FULL", forms=FORMS, requirement="mandatory")
    if floor is not None:
        item["floor"] = floor
    out = compile_doc(document(item, con=contract(A), token_budget=10_000))
    (placed,) = out.packet
    assert (placed.form_rank, placed.tokens) == (rank, tokens)


def test_cheapest_form_need_not_be_the_lowest_rank():
    forms = [
        {"rank": 0, "tokens": 90, "content": "VERBOSE-OUTLINE"},
        {"rank": 1, "tokens": 30, "content": "TIGHT-EXCERPT"},
    ]
    out = compile_doc(
        document(ev("s", "a", tokens=200, forms=forms, requirement="mandatory"), con=contract(A))
    )
    assert out.packet[0].content == "TIGHT-EXCERPT"


# ------------------------------------------------------------------------ dependencies


def test_dependencies_enter_together():
    cands = [
        ev("s", "a", tokens=100, depends_on=["glossary"]),
        context_item("glossary", role="support", tokens=40, requirement="discretionary"),
    ]
    both = compile_doc(document(*cands, con=contract(A), token_budget=140))
    assert set(both.packet_ids) == {"s", "glossary"}
    neither = compile_doc(document(*cands, con=contract(A), token_budget=139))
    assert "s" not in neither.packet_ids
    assert rejection(neither, "s") == ("budget_exceeded", None)
    assert neither.slot("a").state == "unknown"


def test_dependency_outside_u_blocks_the_item():
    cands = [
        ev("s", "a", depends_on=["glossary"]),
        context_item("glossary", role="support", allowed_roles=["other"]),
    ]
    out = compile_doc(document(*cands, con=contract(A)))
    assert out.packet == ()
    assert rejection(out, "s") == ("dependency_missing", None)
    assert rejection(out, "glossary") == ("not_authorised", "role")
    assert out.slot("a").state == "unknown"


def test_blocked_best_supporter_gives_way_to_the_next():
    cands = [
        ev("best", "a", relevance=0.9, depends_on=["gone"]),
        ev("next", "a", relevance=0.1),
        context_item("gone", entity="OTHER"),
    ]
    out = compile_doc(document(*cands, con=contract(A)))
    assert out.slot("a").resource_ids == ("next",)
    assert rejection(out, "best") == ("dependency_missing", None)


def test_dependency_chain_enters_whole():
    cands = [
        ev("s", "a", depends_on=["d1"]),
        context_item("d1", role="support", depends_on=["d2"], requirement="discretionary"),
        context_item("d2", role="tool", requirement="discretionary"),
    ]
    out = compile_doc(document(*cands, con=contract(A)))
    assert set(out.packet_ids) == {"s", "d1", "d2"}


# ------------------------------------------------------------------------------ groups


def test_group_members_enter_together_or_not_at_all():
    cands = [
        ev("s", "a", tokens=100, group="pair"),
        context_item("t", tokens=60, group="pair", requirement="discretionary"),
    ]
    ok = compile_doc(document(*cands, con=contract(A), token_budget=160))
    assert set(ok.packet_ids) == {"s", "t"}
    short = compile_doc(document(*cands, con=contract(A), token_budget=159))
    assert short.packet == ()


def test_required_group_enters_whole_before_evidence():
    cands = [
        ev("s", "a", tokens=100, relevance=1.0),
        context_item(
            "g1", tokens=50, group="g", group_required=True, requirement="required", relevance=0.0
        ),
        context_item(
            "g2", tokens=50, group="g", group_required=True, requirement="required", relevance=0.0
        ),
    ]
    out = compile_doc(document(*cands, con=contract(A), token_budget=100))
    assert set(out.packet_ids) == {"g1", "g2"}
    assert out.slot("a").state == "unknown"


def test_required_group_that_cannot_fit_refuses():
    cands = [
        context_item("g1", tokens=60, group="g", group_required=True),
        context_item("g2", tokens=60, group="g", group_required=True),
    ]
    assert_refused(
        compile_doc(document(*cands, token_budget=100)), "plan", "required_group_unsatisfied"
    )


# -------------------------------------------------------------------------- role order


def mixed():
    return [
        ev("s", "a", relevance=0.1),
        context_item("tool", role="tool", requirement="required", relevance=0.9),
        context_item("task", role="task", requirement="required", relevance=0.5),
        context_item("instr", role="instruction", requirement="required", relevance=0.2),
        context_item("state", role="state", requirement="required", relevance=0.3),
        context_item("support", role="support", requirement="required", relevance=0.4),
    ]


def test_default_role_order_orders_the_packet():
    out = compile_doc(document(*mixed(), con=contract(A)))
    assert out.packet_ids == ("instr", "task", "state", "s", "support", "tool")


def test_policy_role_order_orders_the_packet():
    order = ["tool", "evidence", "support", "state", "task", "instruction"]
    out = compile_doc(document(*mixed(), con=contract(A, policy={"role_order": order})))
    assert [str(i.role) for i in out.packet] == order


# --------------------------------------------------------------------------- overrun


def test_on_overrun_drops_the_last_discretionary_item():
    cands = [
        ev("s", "a", tokens=100),
        context_item("d-hi", requirement="discretionary", tokens=30, relevance=0.9),
        context_item("d-lo", requirement="discretionary", tokens=30, relevance=0.5),
    ]
    out = compile_doc(document(*cands, con=contract(A), token_budget=140))
    assert set(out.packet_ids) == {"s", "d-hi"}
    assert rejection(out, "d-lo") == ("budget_exceeded", None)
    assert any(e["outcome"] == "dropped" for e in trace_of(out, "d-lo"))
    assert out.tokens_used == 130
    roomy = compile_doc(document(*cands, con=contract(A), token_budget=160))
    assert set(roomy.packet_ids) == {"s", "d-hi", "d-lo"}


# ----------------------------------------------------------------------- min_relevance


def test_min_relevance_gates_corroboration_and_optional_context_only():
    con = contract(proposition("a", "rec", max_items=2), policy={"min_relevance": 0.5})
    out = compile_doc(
        document(
            ev("primary", "a", relevance=0.1),
            ev("corroborating", "a", relevance=0.05),
            context_item("required-ctx", requirement="required", relevance=0.0),
            context_item("pref-ctx", requirement="preferred", relevance=0.49),
            context_item("disc-ctx", requirement="discretionary", relevance=0.2),
            context_item("pref-ok", requirement="preferred", relevance=0.5),
            con=con,
        )
    )
    assert set(out.packet_ids) == {"primary", "required-ctx", "pref-ok"}
    assert out.slot("a").state == "supported"
    for cid in ("corroborating", "pref-ctx", "disc-ctx"):
        assert rejection(out, cid) == ("below_min_relevance", None)


# ---------------------------------------------------------------------------- named


def test_named_items_enter_as_mandatory():
    con = contract(A, policy={"min_relevance": 0.9})
    cands = [
        ev("best", "a", relevance=0.9),
        ev("named", "a", relevance=0.1, tokens=200, content="FULL", forms=FORMS),
        context_item("note", requirement="discretionary", relevance=0.0),
    ]
    out = compile_doc(document(*cands, con=con, named=["named", "note"], token_budget=10_000))
    assert set(out.packet_ids) == {"named", "note"}
    placed = next(i for i in out.packet if i.id == "named")
    assert placed.form_rank == 0  # mandatory: the cheapest form
    assert out.slot("a").resource_ids == ("named",)


def test_named_item_over_budget_refuses():
    out = compile_doc(
        document(ev("n", "a", tokens=101), con=contract(A), named=["n"], token_budget=100)
    )
    assert_refused(out, "plan", "mandatory_over_budget")


# --------------------------------------------------------------------------- valid_until


@pytest.mark.parametrize(
    ("cands", "extra", "expected"),
    [
        ([ev("s", "a")], {}, None),
        (
            [ev("s", "a", valid_to="2026-09-10"), ev("t", "a", valid_to="2026-09-05")],
            {},
            "2026-09-05",
        ),
        (
            [ev("s", "a", valid_to="2026-09-10"), ev("later", "a", valid_from="2026-09-03")],
            {},
            "2026-09-02",
        ),
        ([ev("s", "a"), ev("later", "a", valid_from="2026-08-31")], {}, "2026-08-30"),
        (
            [ev("s", "a", superseded_by="next"), ev("next", "a", valid_from="2026-09-15")],
            {},
            "2026-09-14",
        ),
        ([ev("s", "a")], {"delegation": delegation(valid_to="2026-10-01")}, "2026-10-01"),
        ([ev("s", "a"), ev("other", "a", entity="OTHER", valid_from="2026-09-01")], {}, None),
        # Held back by its start date, but it would still be rejected once valid: U stays the same.
        (
            [ev("s", "a"), ev("weak", "a", evidence_class="case_note", valid_from="2026-09-01")],
            {},
            None,
        ),
        ([ev("s", "a"), ev("old", "a", superseded=True, valid_from="2026-09-01")], {}, None),
        (
            [
                ev("s", "a"),
                ev("new", "a", valid_to="2026-09-20"),
                ev("weak-old", "a", evidence_class="case_note", superseded_by="new"),
            ],
            {},
            "2026-09-20",
        ),
        (
            [
                ev("s", "a"),
                context_item("new", valid_to="2026-09-20", entity="OTHER"),
                ev("weak-old", "a", evidence_class="case_note", superseded_by="new"),
            ],
            {},
            None,
        ),
    ],
    ids=[
        "unbounded",
        "earliest-valid-to-in-U",
        "day-before-not-yet-valid",
        "not-yet-valid-tomorrow",
        "successor-takes-over",
        "delegation-ends",
        "other-entity-never-counts",
        "wrong-class-never-counts",
        "superseded-never-counts",
        "successor-ends-in-U",
        "wrong-class-predecessor-never-counts",
    ],
)
def test_valid_until(cands, extra, expected):
    out = compile_doc(document(*cands, con=contract(A), **extra))
    assert (None if out.valid_until is None else out.valid_until.isoformat()) == expected


def test_refused_output_has_no_valid_until():
    out = compile_doc(document(ev("s", "a", valid_to="2026-09-01"), purpose="nope"))
    assert out.valid_until is None


# ----------------------------------------------------------------- no rejected content


def test_trace_and_rejections_never_carry_rejected_content():
    secret = {
        "denied": "SECRET-DENIED-BODY",
        "unauthorised": "SECRET-UNAUTHORISED-BODY",
        "other-entity": "SECRET-ENTITY-BODY",
        "expired": "SECRET-EXPIRED-BODY",
        "weak": "SECRET-WEAK-BODY",
        "spare": "SECRET-SPARE-BODY",
        "big": "SECRET-BIG-BODY",
        "dep-blocked": "SECRET-BLOCKED-BODY",
    }
    forms = [{"rank": 0, "tokens": 1, "content": "SECRET-FORM-BODY"}]
    cands = [
        ev("kept", "a", relevance=1.0, content="KEPT-BODY"),
        ev("denied", "a", denied_principals=["maya"], content=secret["denied"], forms=forms),
        ev("unauthorised", "a", allowed_roles=["x"], content=secret["unauthorised"]),
        ev("other-entity", "a", entity="OTHER", content=secret["other-entity"]),
        ev("expired", "a", valid_to="2026-01-01", content=secret["expired"]),
        ev("weak", "a", evidence_class="email", content=secret["weak"]),
        ev("spare", "a", relevance=0.1, content=secret["spare"]),
        context_item("big", tokens=10_000, requirement="required", content=secret["big"]),
        ev("dep-blocked", "b", depends_on=["unauthorised"], content=secret["dep-blocked"]),
    ]
    out = compile_doc(document(*cands, con=contract(A, B)))
    as_json = out.to_json()
    assert {r["id"] for r in as_json["rejected"]} == set(secret)
    whole = json.dumps(as_json)
    for text in [*secret.values(), "SECRET-FORM-BODY"]:
        assert text not in whole
    assert "KEPT-BODY" not in json.dumps(as_json["trace"])
    assert "KEPT-BODY" not in json.dumps(as_json["rejected"])


def test_refused_trace_never_carries_content():
    cands = [
        ev("m", "a", requirement="mandatory", tokens=500, content="MANDATORY-BODY"),
        ev("x", "a", allowed_roles=["x"], content="DENIED-BODY"),
    ]
    out = compile_doc(document(*cands, con=contract(A), token_budget=100))
    assert_refused(out, "plan", "mandatory_over_budget")
    whole = json.dumps(out.to_json())
    assert "MANDATORY-BODY" not in whole and "DENIED-BODY" not in whole


def test_raising_the_budget_never_loses_support_brought_by_a_context_dependency():
    """Invariant 7 regression: context that depends on evidence must not carry that evidence
    in once the evidence steps ran out of budget, or a larger budget (which lets earlier
    evidence in and leaves less room for the context) loses the slot's support."""
    con = contract(A, proposition("p", "rec"))
    cands = [
        ev("sa", "a", tokens=100),
        ev("s1", "p", tokens=1000, relevance=0.9),
        ev("s2", "p", tokens=10, relevance=0.1),
        context_item("x", requirement="required", tokens=10, depends_on=["s2"]),
    ]
    supported = {}
    for budget in (25, 115, 2000):
        out = compile_doc(document(*cands, con=con, token_budget=budget))
        supported[budget] = {p for p, s in states(out).items() if s == "supported"}
    assert supported[25] <= supported[115] <= supported[2000]
    assert supported[2000] == {"a", "p"}


# ------------------------------------------------------------------ attest's bug guard


def _tamper(kind):
    from compiler import Form, Slot
    from compiler._passes.plan_units import Placement

    def tampered(planned, by_id):
        if kind == "outside_u":
            outsider = by_id["outsider"]
            form = Form(rank=outsider.full_rank, tokens=outsider.tokens, content=outsider.content)
            planned.packet.append(Placement(outsider, form, False, 99))
            planned.tokens_used += form.tokens
        elif kind == "over_budget":
            planned.tokens_used = 10_000
        elif kind == "missing_slot":
            planned.slots.pop()
        elif kind == "hidden_contradiction":
            planned.slots[0] = Slot(
                proposition="a",
                state="supported",
                resource_ids=("s",),
                reason="accepted_evidence",
                required=True,
            )
        return planned

    return tampered


@pytest.mark.parametrize(
    ("kind", "invariant"),
    [
        ("outside_u", "packet_within_admitted_universe"),
        ("over_budget", "tokens_within_budget"),
        ("missing_slot", "one_slot_per_proposition"),
        ("hidden_contradiction", "contradiction_visible"),
    ],
)
def test_attest_refuses_to_release_a_plan_that_breaks_an_invariant(monkeypatch, kind, invariant):
    import compiler._pipeline as pipeline

    real_plan = pipeline.plan
    tamper = _tamper(kind)

    def broken_plan(request, contract, admission, by_id, trace):
        return tamper(real_plan(request, contract, admission, by_id, trace), by_id)

    monkeypatch.setattr(pipeline, "plan", broken_plan)
    cands = [
        ev("s", "a"),
        candidate("c", **CONTRA, tokens=5000),
        ev("outsider", "a", entity="OTHER", content="OUTSIDER-BODY"),
    ]
    out = compile_doc(document(*cands, con=contract(A, B)))
    assert_refused(out, "attest", "invariant_violated")
    assert out.refusal.detail == invariant
    assert "OUTSIDER-BODY" not in json.dumps(out.to_json())
