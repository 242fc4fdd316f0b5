"""Perturbations change one predicate each; the standard suite and its flips tell a policy owner
which slots depend on which fact."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from evidence_factories import (
    assert_refused,
    candidate,
    compile_doc,
    delegation,
    document,
    rejection,
    request,
)

from compiler import (
    CONTAMINATION_SIZE,
    Perturbation,
    admitted_ids,
    compile_input,
    contaminate,
    contradict,
    flips,
    hide,
    load_input,
    revoke_delegation,
    shift_days,
    standard_suite,
    substitute_class,
    supersede,
    swap_principal,
    sweep,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture
def atlas():
    return load_input(json.loads((EXAMPLES / "atlas.json").read_text()))


def names(suite):
    return [p.name for p in suite]


def test_standard_suite_for_atlas_lists_every_required_perturbation(atlas):
    suite = standard_suite(atlas, weak_classes=["case_note"])
    assert names(suite) == [
        "shift_days(-1)",
        "shift_days(+1)",
        "hide(facility-F102)",
        "hide(policy-P3)",
        "hide(workflow-E88)",
        "substitute_class(facility-F102, case_note)",
        "substitute_class(policy-P3, case_note)",
        "substitute_class(workflow-E88, case_note)",
        "swap_principal(outsider, outsider_role)",
        f"contaminate({CONTAMINATION_SIZE})",
        "promote_weak(case_note)",
        "look_alike",
        "contradict_first",
        "swap_entity(OTHER-ENTITY)",
        "supersede(facility-F102)",
        "supersede(policy-P3)",
        "supersede(workflow-E88)",
        # The contract probes: what the contract itself says.
        "precedence",
        "swap_purpose(unpermitted_purpose)",
        "promote_classes(facility_record+investigation_note+policy_clause+workflow_event)",
        "contradict_classes(waiver_valid=committee_record)",
        "remove_support",
        "crowd",
    ]


def test_suite_revokes_the_delegation_only_when_there_is_one(atlas):
    assert "revoke_delegation" not in names(standard_suite(atlas))
    delegated = atlas.model_copy(
        update={
            "request": atlas.request.model_copy(
                update={
                    "delegation": load_input(
                        document(candidate("x"), req=request(delegation=delegation()))
                    ).request.delegation
                }
            )
        }
    )
    assert "revoke_delegation" in names(standard_suite(delegated))


def test_atlas_sweep_flips_exactly_the_slots_each_fact_supports(atlas):
    result = sweep(atlas, weak_classes=["case_note"])
    flipped = {
        row["name"]: {f["proposition"]: (f["base"], f["variant"]) for f in row["flips"]["slots"]}
        for row in result["perturbations"]
    }
    assert flipped["hide(facility-F102)"] == {"facility_limit": ("supported", "unknown")}
    assert flipped["substitute_class(policy-P3, case_note)"] == {
        "continuation_rule": ("supported", "unknown")
    }
    # An unrelated employee asking the identical question gets nothing established.
    assert flipped["swap_principal(outsider, outsider_role)"] == {
        "facility_limit": ("supported", "unknown"),
        "review_open": ("supported", "unknown"),
        "continuation_rule": ("supported", "unknown"),
    }
    # Fifty maximally relevant forbidden items change nothing.
    assert flipped[f"contaminate({CONTAMINATION_SIZE})"] == {}
    # The boundary's perturbations: nothing inapplicable or weak gets in, every contradiction
    # surfaces, and superseding a packet item flips exactly its slot.
    assert flipped["promote_weak(case_note)"] == {}
    assert flipped["look_alike"] == {}
    assert set(flipped["contradict_first"]) == {
        "facility_limit",
        "review_open",
        "waiver_valid",
        "continuation_rule",
    }
    assert flipped["supersede(policy-P3)"] == {"continuation_rule": ("supported", "unknown")}
    # The contract probes: one supporter of each waiver class establishes the waiver; the
    # classes the contract does not accept change nothing; without any support the three
    # supported slots fall to unknown; a committee record's contradiction surfaces; the crowd
    # adds no slot.
    assert flipped["precedence"] == {"waiver_valid": ("unknown", "supported")}
    assert (
        flipped["promote_classes(facility_record+investigation_note+policy_clause+workflow_event)"]
        == {}
    )
    assert flipped["remove_support"] == {
        "facility_limit": ("supported", "unknown"),
        "review_open": ("supported", "unknown"),
        "continuation_rule": ("supported", "unknown"),
    }
    assert flipped["contradict_classes(waiver_valid=committee_record)"] == {
        "waiver_valid": ("unknown", "contradicted")
    }
    assert flipped["crowd"] == {}
    assert result["totals"] == {
        "perturbations": 23,
        "with_flips": 16,
        "flipped_slots": 28,
        "violations": 0,
        # min_relevance 0: the crowd's context enters at each of its five levels.
        "findings": 11,
        "expected": 86,
        "expectation_failures": 0,
    }
    assert result["passed"] is True


def test_contaminants_all_fail_admission_and_outrank_everything(atlas):
    polluted = contaminate(atlas, CONTAMINATION_SIZE)
    added = [c for c in polluted.candidates if c.id.startswith("contaminant-")]
    assert len(added) == CONTAMINATION_SIZE
    assert all(c.relevance == 1.0 for c in added)
    assert admitted_ids(polluted) == admitted_ids(atlas)
    out = compile_input(polluted)
    reasons = {r["reason"] for r in out.rejected if r["id"].startswith("contaminant-")}
    assert reasons == {"not_authorised", "not_applicable", "wrong_evidence_class"}


def expiring_document():
    """A local transition addendum governs until midnight on its last day (the decision date);
    then the group manual it supersedes applies."""
    addendum = candidate(
        "addendum-L1",
        evidence_class="policy_clause",
        supports=["continuation_rule"],
        valid_from="2026-07-01",
        valid_to="2026-09-30",
        relevance=0.6,
    )
    manual = candidate(
        "manual-G4",
        evidence_class="policy_clause",
        supports=["continuation_rule"],
        valid_from="2026-01-01",
        superseded_by="addendum-L1",
        relevance=0.5,
    )
    con = {
        "decision_type": "credit.review.continuation",
        "version": "1",
        "purposes": ["annual_credit_review"],
        "propositions": [{"key": "continuation_rule", "accepted_classes": ["policy_clause"]}],
    }
    return document(addendum, manual, con=con, decision_date="2026-09-30")


def test_moving_the_decision_a_day_changes_the_governing_rule():
    # Text and identity are unchanged; only the date moves.
    base_doc = load_input(expiring_document())
    base = compile_input(base_doc)
    assert base.packet_ids == ("addendum-L1",)
    assert str(base.valid_until) == "2026-09-30"
    moved = compile_input(shift_days(base_doc, 1))
    assert moved.packet_ids == ("manual-G4",)
    change = flips(base, moved, base_doc)
    assert change["slots"] == []  # still supported...
    assert change["admitted_added"] == ["manual-G4"]  # ...but by a different rule
    assert change["admitted_removed"] == ["addendum-L1"]


def test_supersede_and_substitute_change_one_candidate_only(atlas):
    superseded = supersede(atlas, "policy-P3")
    assert [c.id for c in superseded.candidates if c.superseded] == ["policy-P2", "policy-P3"]
    substituted = substitute_class(atlas, "facility-F102", "case_note")
    changed = [
        (a.id, b.evidence_class)
        for a, b in zip(atlas.candidates, substituted.candidates, strict=True)
        if a != b
    ]
    assert changed == [("facility-F102", "case_note")]
    out = compile_input(substituted)
    assert out.slot("facility_limit").state == "unknown"
    assert ("facility-F102", "wrong_evidence_class") in {
        (r["id"], r["reason"]) for r in out.rejected
    }


def test_swap_principal_follows_the_delegation():
    doc = load_input(document(candidate("a"), req=request(delegation=delegation())))
    swapped = swap_principal(doc, "omar", ["ops"])
    assert swapped.request.principal == "omar"
    assert swapped.request.delegation.on_behalf_of == "omar"


def test_revoked_delegation_refuses_and_every_slot_reads_refused():
    doc = load_input(document(candidate("a"), req=request(delegation=delegation())))
    result = sweep(doc, [Perturbation("revoke_delegation")])
    row = result["perturbations"][0]
    assert row["result"] == "refused"
    assert row["slots"] == {"facility_limit": "refused"}
    assert row["flips"]["refusal"]["reason"] == "delegation_invalid"
    with pytest.raises(ValueError, match="no delegation"):
        revoke_delegation(load_input(document(candidate("a"))))


def test_hide_leaves_dependants_for_the_compiler_to_reject_as_absent():
    """Hiding an item is a retriever missing it: what depends on it is still retrieved, and
    the compiler names why it cannot enter (docs/design.md, "Pools as retrievers return
    them")."""
    doc = load_input(
        document(
            candidate("base-record"),
            candidate("annex", depends_on=["base-record"], supports=[], role="support",
                      evidence_class="annex"),
            candidate("memo", depends_on=["annex"], relevance=0.4),
            candidate("other", relevance=0.2),
        )
    )  # fmt: skip
    hidden = hide(doc, "base-record")
    assert [c.id for c in hidden.candidates] == ["annex", "memo", "other"]
    out = compile_input(hidden)
    assert rejection(out, "annex") == ("dependency_absent", None)
    assert rejection(out, "memo") == ("dependency_absent", None)
    assert [i["id"] for i in out.to_json()["packet"]] == ["other"]
    with pytest.raises(ValueError, match="no candidate 'missing'"):
        hide(doc, "missing")


def test_hiding_a_named_items_dependency_refuses_with_the_absent_reason():
    doc = load_input(
        document(
            candidate("base-record"),
            candidate("annex", depends_on=["base-record"], supports=[], role="support",
                      evidence_class="annex"),
            named=["annex", "base-record"],
        )
    )  # fmt: skip
    hidden = hide(doc, "base-record")
    assert hidden.request.named == ("annex",)  # the hidden item itself is no longer asked for
    out = compile_input(hidden)
    assert_refused(out, "plan", "named_not_admissible")
    assert out.to_json()["refusal"]["detail"] == "dependency_absent"


def test_contradict_makes_a_supported_slot_contradicted(atlas):
    out = compile_input(contradict(atlas, "facility_limit"))
    slot = out.slot("facility_limit")
    assert (slot.state, slot.reason) == ("contradicted", "sources_disagree")
    assert "contradiction-facility_limit" in slot.resource_ids
    with pytest.raises(ValueError, match="no proposition 'nope'"):
        contradict(atlas, "nope")


def test_perturbations_are_data_that_replays(atlas):
    perturbation = Perturbation("shift_days", {"days": 1})
    assert perturbation.to_json() == {
        "name": "shift_days(+1)",
        "operator": "shift_days",
        "args": {"days": 1},
    }
    assert perturbation.apply(atlas) == shift_days(atlas, 1)
    with pytest.raises(ValueError, match="unknown perturbation operator 'teleport'"):
        Perturbation("teleport").apply(atlas)


def test_sweep_is_deterministic_under_candidate_order(atlas):
    reversed_doc = atlas.model_copy(update={"candidates": tuple(reversed(atlas.candidates))})
    assert json.dumps(sweep(atlas), sort_keys=True) == json.dumps(
        sweep(reversed_doc), sort_keys=True
    )


def test_flips_report_packet_and_token_changes(atlas):
    base = compile_doc(json.loads((EXAMPLES / "atlas.json").read_text()))
    variant = compile_input(hide(atlas, "workflow-E88"))
    change = flips(base, variant, atlas)
    assert change["packet_removed"] == ["workflow-E88"]
    assert change["tokens"] == {"base": 530, "variant": 440}


def test_flips_takes_just_the_two_outputs(atlas):
    """The issue's interface is `flips(base_output, variant_output)`: the outputs name their
    slots, and a refused one reads `refused` for every slot the other one has."""
    base = compile_input(atlas)
    hidden = compile_input(hide(atlas, "facility-F102"))
    change = flips(base, hidden)
    assert [(f["proposition"], f["base"], f["variant"]) for f in change["slots"]] == [
        ("facility_limit", "supported", "unknown")
    ]
    assert change == flips(base, hidden, atlas)
    refused = compile_input(
        atlas.model_copy(
            update={"request": atlas.request.model_copy(update={"purpose": "marketing"})}
        )
    )
    assert refused.result == "refused"
    change = flips(base, refused)
    assert {f["proposition"]: (f["base"], f["variant"]) for f in change["slots"]} == {
        "facility_limit": ("supported", "refused"),
        "review_open": ("supported", "refused"),
        "waiver_valid": ("unknown", "refused"),
        "continuation_rule": ("supported", "refused"),
    }
    assert change == flips(base, refused, atlas)
    back = flips(refused, base)
    assert [f["base"] for f in back["slots"]] == ["refused"] * 4


@pytest.mark.parametrize(
    ("operator", "args", "problem"),
    [
        ("shift_days", {"days": "1"}, "days: Input should be a valid integer"),
        ("contaminate", {"count": True}, "count: Input should be a valid integer"),
        ("contaminate", {"count": -1}, "count: Input should be greater than or equal to 0"),
        ("hide", {"candidate_id": "x", "mode": "all"}, "mode: Extra inputs are not permitted"),
        ("hide", {}, "candidate_id: Field required"),
        ("swap_principal", {"principal": "o", "roles": "r"}, "roles: Input should be a valid list"),
    ],
)
def test_stored_perturbation_arguments_are_validated_before_they_run(
    atlas, operator, args, problem
):
    with pytest.raises(ValueError, match=f"perturbation '{operator}': {problem}"):
        Perturbation(operator, args).apply(atlas)
    with pytest.raises(ValueError, match=problem):
        Perturbation.from_json({"operator": operator, "args": args})


def test_a_stored_perturbation_replays_to_the_same_variant(atlas):
    stored = Perturbation("swap_principal", {"principal": "o", "roles": ["r"]}).to_json()
    replayed = Perturbation.from_json(stored)
    assert replayed.apply(atlas) == swap_principal(atlas, "o", ["r"])
