"""Mutation testing of contracts (compiler._mutation): every mistake kind makes the mutants it
should, and a suite's scenarios kill them, let them survive (with advice and a scenario that
would kill them) or find them equivalent. On a clinical trial's enrolment screening."""

from __future__ import annotations

import copy

import pytest
from mutation_fixtures import (
    ABNORMAL_LAB,
    ENROLMENT,
    ENROLMENT_CATALOGUE,
    ENROLMENT_POOL,
    ENROLMENT_WEAK,
    WASHOUT_PENDING_POOL,
    enrolment_document,
    enrolment_item,
)

from compiler import MUTATION_KINDS, MutationCase, Perturbation, load_input, mutants, run_mutation

CONTRACT = enrolment_document().contract
CORPUS = enrolment_document([*ENROLMENT_POOL, ABNORMAL_LAB]).candidates


def all_mutants(contract=CONTRACT, **options):
    options = {"catalogue": ENROLMENT_CATALOGUE, "weak_classes": ENROLMENT_WEAK,
               "corpus": CORPUS} | options  # fmt: skip
    return mutants(contract, **options)


def spec(mutant, key):
    return mutant.contract.proposition(key)


# kind -> the keys it gives on the enrolment contract, and what the first one changes.
KIND_TABLE = [
    ("weak_class_added",
     ["weak_class_added:consent_signed:nurse_note", "weak_class_added:eligibility_met:nurse_note",
      "weak_class_added:washout_complete:nurse_note"],
     lambda m: spec(m, "consent_signed").accepted_classes == ("signed_consent_form",
                                                              "nurse_note")),
    ("unknown_class_added",
     ["unknown_class_added:consent_signed", "unknown_class_added:eligibility_met",
      "unknown_class_added:washout_complete"],
     lambda m: spec(m, "consent_signed").accepted_classes[-1] == "machine_summary"),
    # the nearest worse tier that is not weak: lab_result (2), or referral_letter (3) where
    # lab_result is accepted already
    ("lower_tier_class_added",
     ["lower_tier_class_added:consent_signed", "lower_tier_class_added:eligibility_met",
      "lower_tier_class_added:washout_complete"],
     lambda m: spec(m, "consent_signed").accepted_classes[-1] == "lab_result"),
    ("required_dropped",  # washout_complete is optional already
     ["required_dropped:consent_signed", "required_dropped:eligibility_met"],
     lambda m: spec(m, "consent_signed").required is False),
    ("precedence_reversed", ["precedence_reversed:eligibility_met"],
     lambda m: spec(m, "eligibility_met").accepted_classes == ("lab_result",
                                                               "investigator_assessment")),
    ("contradicting_class_dropped",  # lab-L2, a lab result, contradicts eligibility
     ["contradicting_class_dropped:eligibility_met:lab_result"],
     lambda m: spec(m, "eligibility_met").accepted_classes == ("investigator_assessment",)),
    ("first_class_dropped",
     ["first_class_dropped:consent_signed", "first_class_dropped:eligibility_met",
      "first_class_dropped:washout_complete"],
     lambda m: spec(m, "consent_signed").accepted_classes == ()),
    ("purpose_widened", ["purpose_widened:analytics", "purpose_widened:research"],
     lambda m: m.contract.purposes == ("trial_enrolment", "analytics")),
    ("proposition_dropped",
     ["proposition_dropped:consent_signed", "proposition_dropped:eligibility_met",
      "proposition_dropped:washout_complete"],
     lambda m: [p.key for p in m.contract.propositions] == ["eligibility_met",
                                                            "washout_complete"]),
    ("key_mistyped",
     ["key_mistyped:consent_signed", "key_mistyped:eligibility_met",
      "key_mistyped:washout_complete"],
     lambda m: [p.key for p in m.contract.propositions][0] == "cnosent_signed"),
    ("max_items_raised",
     ["max_items_raised:consent_signed", "max_items_raised:eligibility_met",
      "max_items_raised:washout_complete"],
     lambda m: spec(m, "consent_signed").max_items == 3),
    ("min_relevance_lowered", ["min_relevance_lowered:policy"],
     lambda m: m.contract.policy.min_relevance == pytest.approx(0.1)),
]  # fmt: skip


def test_the_table_covers_every_kind():
    assert [kind for kind, _, _ in KIND_TABLE] == list(MUTATION_KINDS)


@pytest.mark.parametrize(("kind", "keys", "changed"), KIND_TABLE, ids=[k for k, *_ in KIND_TABLE])
def test_each_kind_makes_one_mutant_where_it_applies(kind, keys, changed):
    made = [m for m in all_mutants() if m.kind == kind]
    assert [m.key for m in made] == keys
    assert changed(made[0])
    # nothing else of the contract moves
    for m in made:
        assert m.contract.decision_type == CONTRACT.decision_type
        assert m.contract != CONTRACT
        assert m.description and "`" in m.description


def test_mutants_come_in_kind_order_and_are_the_same_every_time():
    first, again = all_mutants(), all_mutants()
    assert first == again
    order = [MUTATION_KINDS.index(m.kind) for m in first]
    assert order == sorted(order)
    assert len({m.key for m in first}) == len(first)


def test_without_a_catalogue_or_corpus_only_the_kinds_that_need_none_apply():
    kinds = {m.kind for m in mutants(CONTRACT)}
    assert "weak_class_added" not in kinds  # no weak class known
    assert "lower_tier_class_added" not in kinds  # no tiers known
    assert "contradicting_class_dropped" not in kinds  # no corpus read
    assert {"required_dropped", "unknown_class_added", "key_mistyped"} <= kinds


def test_a_lower_tier_class_the_corpus_already_claims_is_the_one_added():
    letter = enrolment_item("referral-R1", "referral_letter", ["consent_signed"])
    corpus = enrolment_document([*ENROLMENT_POOL, letter]).candidates
    (added,) = [m for m in all_mutants(corpus=corpus)
                if m.key == "lower_tier_class_added:consent_signed"]  # fmt: skip
    assert spec(added, "consent_signed").accepted_classes[-1] == "referral_letter"


def test_the_unknown_class_is_outside_the_catalogue_and_a_typo_is_not_another_key():
    catalogue = ENROLMENT_CATALOGUE | {"machine_summary": 4}
    unknown = next(m for m in all_mutants(catalogue=catalogue) if m.kind == "unknown_class_added")
    assert spec(unknown, "consent_signed").accepted_classes[-1] == "machine_summary_2"
    contract = copy.deepcopy(ENROLMENT)
    contract["propositions"].append({"key": "cnosent_signed", "accepted_classes": ["x"]})
    typo = next(
        m
        for m in all_mutants(enrolment_document(contract=contract).contract)
        if m.key == "key_mistyped:consent_signed"
    )
    keys = [p.key for p in typo.contract.propositions]
    assert len(set(keys)) == len(keys) and "consent_signed" not in keys


def test_no_floor_means_no_lowered_floor_and_a_low_floor_goes_to_zero():
    contract = copy.deepcopy(ENROLMENT)
    contract["policy"] = {"min_relevance": 0.0}
    assert not [m for m in all_mutants(enrolment_document(contract=contract).contract)
                if m.kind == "min_relevance_lowered"]  # fmt: skip
    contract["policy"] = {"min_relevance": 0.15}
    (lowered,) = [m for m in all_mutants(enrolment_document(contract=contract).contract)
                  if m.kind == "min_relevance_lowered"]  # fmt: skip
    assert lowered.contract.policy.min_relevance == 0.0


# --- running ---------------------------------------------------------------------------


def clear(expected=None) -> MutationCase:
    return MutationCase("clear", enrolment_document(), expected)


def pending(expected=None) -> MutationCase:
    """Before the washout is on file: no item claims `washout_complete`, so dropping it leaves
    no item claiming a proposition the contract does not ask for (the standard review's
    corpus finding), and only what a scenario pins can notice."""
    return MutationCase("pending", enrolment_document(WASHOUT_PENDING_POOL), expected)


def one(key: str, cases, **options):
    """The result of one mutant (by key) against `cases`, as JSON."""
    options = {"catalogue": ENROLMENT_CATALOGUE, "weak_classes": ENROLMENT_WEAK} | options
    chosen = [m for m in all_mutants() if m.key == key]
    report = run_mutation(CONTRACT, cases, mutants=chosen, **options).to_json()
    (result,) = report["mutants"]
    return result


def as_case(proposal, contract=ENROLMENT) -> MutationCase:
    """What an owner adds when they accept a proposal."""
    document = load_input({"request": proposal["request"], "directory": proposal["directory"],
                           "candidates": proposal["candidates"],
                           "contract": copy.deepcopy(contract)})  # fmt: skip
    return MutationCase(proposal["name"], document, proposal["expected"])


def test_a_weak_class_accepted_is_killed_by_the_standard_sweep():
    result = one("weak_class_added:consent_signed:nurse_note", [clear()])
    assert result["status"] == "killed" and result["killed_by"] == "standard"
    assert result["reasons"] and result["reasons"][0].startswith("clear: ")
    assert "consent_signed" in result["reasons"][0]
    assert result["advice"] == "" and result["proposal"] is None


def test_a_class_outside_the_catalogue_is_killed_by_the_catalogue_check():
    result = one("unknown_class_added:eligibility_met", [clear()])
    assert result["killed_by"] == "standard"
    assert result["reasons"] == [
        "catalogue: proposition 'eligibility_met' accepts 'machine_summary', which is not in "
        "the source-class catalogue"
    ]


def test_a_required_proposition_made_optional_is_killed_by_the_standard_sweep():
    result = one("required_dropped:consent_signed", [clear()])
    assert result["killed_by"] == "standard"
    assert "consent_signed is optional" in result["reasons"][0]


def test_a_dropped_proposition_an_item_claims_is_killed_by_the_standard_sweep():
    """An item still claims the dropped key: the corpus finding notices, nothing need pin it."""
    result = one("proposition_dropped:washout_complete", [clear()])
    assert result["status"] == "killed" and result["killed_by"] == "standard"
    assert result["reasons"] == [
        "clear: 1 item claims washout_complete, which the contract does not ask for: a "
        "proposition dropped or its key mistyped?"
    ]


def test_an_owner_expectation_that_holds_for_the_contract_kills_a_dropped_proposition():
    expected = {"slots": {"washout_complete": "unknown"}}
    result = one("proposition_dropped:washout_complete", [pending(expected)])
    assert result["status"] == "killed" and result["killed_by"] == "expectations"
    assert result["reasons"] == ["pending: expected slot washout_complete unknown, got missing"]


@pytest.mark.parametrize(
    ("perturbation", "expected", "reason"),
    [(Perturbation("hide", {"candidate_id": "consent-C1"}),
      {"slots": {"washout_complete": "unknown", "consent_signed": "unknown"}},
      "pending, hide(consent-C1): expected slot washout_complete unknown, got missing"),
     (Perturbation("contradict", {"proposition": "washout_complete"}),
      {"slots": {"washout_complete": "contradicted"}},
      "pending, contradict(washout_complete): cannot be run against the mistake (the contract "
      "has no proposition 'washout_complete')")],
    ids=["pinned", "not-runnable"],
)  # fmt: skip
def test_an_owner_expectation_on_a_variant_kills_too(perturbation, expected, reason):
    case = MutationCase("pending", enrolment_document(WASHOUT_PENDING_POOL),
                        variants=[(perturbation, expected)])  # fmt: skip
    result = one("proposition_dropped:washout_complete", [case])
    assert result["killed_by"] == "expectations"
    assert result["reasons"] == [reason]


def test_an_expectation_the_contract_already_fails_kills_nothing():
    wrong = {"slots": {"washout_complete": "supported"}}  # the contract gives unknown
    result = one("proposition_dropped:washout_complete", [pending(wrong)])
    assert result["status"] == "surviving"


def test_a_surviving_mutant_has_advice_and_a_proposal_that_kills_it():
    """No item claims `washout_complete`, so no review flag notices it dropped from the
    contract, and the scenario pins nothing: the proposal is the scenario itself with its
    slots (and what else differs) pinned."""
    result = one("proposition_dropped:washout_complete", [pending()])
    assert result["status"] == "surviving" and result["killed_by"] is None
    assert result["advice"] == (
        "if `washout_complete` was dropped from the contract, no scenario would notice: pin "
        "the state of `washout_complete` in a scenario"
    )
    proposal = result["proposal"]
    assert proposal["pool_from"] == "pending" and proposal["based_on"] == "pending"
    assert proposal["expected"] == {
        "slots": {"consent_signed": "supported", "eligibility_met": "supported",
                  "washout_complete": "unknown"},
        "required": {"washout_complete": False},
        "resource_ids": {"washout_complete": []},
    }  # fmt: skip
    # decision_ready is the same for both (washout_complete is optional): not pinned
    assert proposal["request"]["purpose"] == "trial_enrolment"
    assert [c["id"] for c in proposal["candidates"]] == sorted(
        c["id"] for c in WASHOUT_PENDING_POOL
    )
    after = one("proposition_dropped:washout_complete", [pending(), as_case(proposal)])
    assert after["status"] == "killed" and after["killed_by"] == "expectations"


def with_corroboration():
    """The enrolment contract where eligibility may rest on two items (so the relevance floor,
    which applies to corroborating items, can show), with a floor of 0.05: the lowest context
    level of the standard sweep's crowd, which the floor admits (items at or above it enter)."""
    contract = copy.deepcopy(ENROLMENT)
    contract["propositions"][1]["max_items"] = 2
    contract["policy"] = {"min_relevance": 0.05}
    return contract


def test_a_floor_lowered_across_a_crowd_level_is_killed_by_the_standard_sweep():
    """From 0.3 to 0.1: the crowd's context at 0.15 and at 0.25 now enters the packet, one
    finding per level."""
    result = one("min_relevance_lowered:policy", [clear()])
    assert result["status"] == "killed" and result["killed_by"] == "standard"
    assert result["reasons"] == [
        "clear: context of relevance 0.15 enters the packet (min_relevance 0.1)",
        "clear: context of relevance 0.25 enters the packet (min_relevance 0.1)",
    ]


def test_a_mutant_no_scenario_tells_apart_is_equivalent_with_an_aimed_proposal():
    """The floor lowered from 0.05 to 0: no item of the scenario or of its sweep lies below
    0.05, so nothing changes here. The proposal adds a corroborating item between the two
    floors, and pins which items eligibility rests on."""
    contract = with_corroboration()
    document = enrolment_document(contract=contract)
    (lowered,) = [m for m in mutants(document.contract) if m.kind == "min_relevance_lowered"]
    cases = [MutationCase("clear", document)]
    report = run_mutation(document.contract, cases, mutants=[lowered]).to_json()
    (result,) = report["mutants"]
    assert result["status"] == "equivalent" and report["score"] is None
    assert report["totals"]["equivalent"] == 1
    proposal = result["proposal"]
    assert proposal["pool_from"] is None  # the pool is not the scenario's own
    assert proposal["based_on"].startswith("clear (")
    assert set(proposal["expected"]) == {"slots", "resource_ids"}
    assert proposal["expected"]["resource_ids"] == {
        "eligibility_met": ["investigator_assessment-record"]
    }
    cases.append(as_case(proposal, contract))
    after = run_mutation(document.contract, cases, mutants=[lowered]).to_json()
    assert after["mutants"][0]["status"] == "killed"
    assert after["score"] == 1.0


def test_a_dropped_contradicting_class_is_noticed_on_the_scenario_with_the_contradiction():
    abnormal = MutationCase("abnormal-lab", enrolment_document([*ENROLMENT_POOL, ABNORMAL_LAB]))
    result = one("contradicting_class_dropped:eligibility_met:lab_result", [clear(), abnormal])
    assert result["status"] == "killed" and result["killed_by"] == "standard"
    assert result["reasons"][0].startswith("abnormal-lab: ")


def test_the_report_scores_killed_over_killed_and_surviving_and_reports_progress():
    seen = []
    report = run_mutation(CONTRACT, [clear({"slots": {"washout_complete": "supported"}})],
                          catalogue=ENROLMENT_CATALOGUE, weak_classes=ENROLMENT_WEAK,
                          progress=lambda done, total: seen.append((done, total)))  # fmt: skip
    data = report.to_json()
    totals = data["totals"]
    count = totals["mutants"]
    assert seen == [(n, count) for n in range(1, count + 1)]
    assert count == totals["killed"] + totals["surviving"] + totals["equivalent"]
    assert data["score"] == pytest.approx(
        totals["killed"] / (totals["killed"] + totals["surviving"])
    )
    assert sum(k["mutants"] for k in totals["by_kind"].values()) == count
    corpus = enrolment_document().candidates  # the scenarios' own
    assert [m["key"] for m in data["mutants"]] == [m.key for m in all_mutants(corpus=corpus)]
    for m in data["mutants"]:
        assert (m["status"] == "killed") == bool(m["reasons"]) == (m["killed_by"] is not None)
        assert (m["status"] == "killed") != bool(m["advice"])
