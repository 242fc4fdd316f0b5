"""`RELATIONS`, one `Relation` per operator kept as data, and `judge`, which applies an
operator's relation to one variant.
"""

from __future__ import annotations

from compiler._codes import Result
from compiler._input import CompileInput
from compiler._output import CompileOutput
from compiler._perturb.arguments import Perturbation
from compiler._perturb.flips import REFUSED
from compiler._relations.judges import (
    _becomes_contradicted,
    _changes_are_findings,
    _first_classes,
    _loses_support,
    _must_not_change,
    _must_refuse,
    _named_contradiction,
    _nothing_admitted_for_outsider,
    _other_entity_admits_nothing_of_the_first,
    _plan_must_change,
    _weak_never_establishes,
)
from compiler._relations.labels import (
    _contradict_classes_label,
    _contradict_label,
    _days,
    _fixed,
    _item_label,
    _principal_label,
    _promote_classes_label,
    _substitute_label,
    _weak_label,
)
from compiler._relations.probes import (
    contradiction_surfaces,
    crowd_kept_out,
    precedence_holds,
    promotion_judged,
    purpose_judged,
    support_removed,
)
from compiler._relations.verdicts import EXPECTED, FINDING, Case, Context, Relation, Verdict


def label(perturbation: Perturbation, document: CompileInput) -> str:
    """The perturbation in plain language, for a reviewer."""
    return RELATIONS[perturbation.operator].label(perturbation, document)


def _date_cause(case: Case) -> str:
    on = case.variant.request.decision_date if case.variant.request else None
    shown = label(case.perturbation, case.context.document)
    return f"{shown}, deciding on {on}" if on else shown


RELATIONS: dict[str, Relation] = {
    r.operator: r
    for r in (
        Relation(
            "shift_days",
            "the decision date moves by a number of days",
            "anything may change; a decision that changes within a day is worth knowing",
            "a flip, or a slot resting on other items, is a finding naming the items that left "
            "or entered and the date; anything else is expected",
            _days,
            _changes_are_findings(_date_cause),
        ),
        Relation(
            "supersede",
            "one item of the base packet is marked superseded",
            "the plan id changes; the slots resting on the item may lose it",
            "an unchanged plan id is a violation; each flip is a finding naming the item",
            _item_label("superseded"),
            _plan_must_change(
                _changes_are_findings(lambda c: f"{c.args['candidate_id']} superseded")
            ),
        ),
        Relation(
            "substitute_class",
            "one admitted item's class is replaced by one its propositions "
            "do not accept (a weak class when one is known)",
            "the slots resting on the item lose it; nothing else changes",
            "a slot resting on the item that flips is expected; the item still establishing its "
            "slot, or any other flip, is a finding",
            _substitute_label,
            _loses_support(EXPECTED, "{item} as a {cls} no longer establishes {key} ({state})"),
        ),
        Relation(
            "hide",
            "one admitted item is removed; what depends on it stays, rejected dependency_absent",
            "the slots resting on the item alone may lose their support",
            "a slot resting on the item that flips is a finding (a single source); any other "
            "flip is a finding naming the cause; anything else is expected",
            _item_label("hidden"),
            _loses_support(FINDING, "{key} rests on a single source: without {item} it is {state}"),
        ),
        Relation(
            "swap_principal",
            "the caller is replaced (the delegation follows)",
            "a caller with none of the request's roles is admitted nothing: every slot unknown",
            "for an outsider, any admitted item and any slot not unknown is a violation naming "
            "the items; for another caller flips are findings",
            _principal_label,
            _nothing_admitted_for_outsider,
        ),
        Relation(
            "revoke_delegation",
            "the request's delegation is revoked",
            "the compile must be refused",
            "a refused compile is expected for every slot; a compiled one is a violation",
            _fixed("delegation revoked"),
            _must_refuse,
        ),
        Relation(
            "contaminate",
            "maximally relevant items that must each fail admission are added",
            "nothing may change",
            "any admitted contaminant and any flip is a violation",
            lambda p, d: f"{p.args['count']} forbidden high scorers added",
            _must_not_change("it must fail admission"),
        ),
        Relation(
            "contradict",
            "an admissible item contradicting one proposition is added",
            "the proposition becomes contradicted when the item's class is accepted for it; "
            "nothing else changes",
            "a target slot not contradicted, or any other flip, is a violation",
            _contradict_label,
            _becomes_contradicted(_named_contradiction),
        ),
        Relation(
            "promote_weak",
            "for each proposition, an item of each weak class claiming it with "
            "top relevance and approval wording (a corpus item's copy, or a synthetic one)",
            "no weak item is admitted: no slot becomes supported by a weak class",
            "a proposition for which a weak item is admitted is a violation naming the item; "
            "any other flip is a finding",
            _weak_label,
            _weak_never_establishes,
        ),
        Relation(
            "look_alike",
            "a superseded, an expired and another entity's copy of each admitted "
            "supporting item, each more relevant than the original",
            "none is admitted; nothing changes",
            "any admitted look-alike and any flip is a violation",
            _fixed("superseded, expired and other-entity look-alikes added"),
            _must_not_change("it is inapplicable"),
        ),
        Relation(
            "contradict_first",
            "for each proposition, an admissible item of its first accepted class contradicting it",
            "every proposition that accepts a class becomes contradicted",
            "a proposition not contradicted is a violation (a contradiction that does not surface)",
            _fixed("each proposition contradicted by its first accepted class"),
            _becomes_contradicted(_first_classes),
        ),
        Relation(
            "swap_entity",
            "the same request about another entity",
            "nothing about the first entity is admitted",
            "an admitted item of the first entity is a violation naming it; anything else is "
            "expected",
            lambda p, d: f"the same request about {p.args['entity']}",
            _other_entity_admits_nothing_of_the_first,
        ),
        Relation(
            "replay_expiry",
            "the decision replayed on the day after the plan's valid_until",
            "the plan id changes; the slots resting on what expired may change",
            "an unchanged plan id is a violation; each flip is a finding naming the items that "
            "left or entered and the date",
            lambda p, d: f"the day after the plan expires on {p.args['valid_until']}",
            _plan_must_change(_changes_are_findings(_date_cause)),
        ),
        # The contract probes: what the contract itself says (compiler._perturb.probes).
        Relation(
            "precedence",
            "one admissible supporter of each accepted class, the later classes more relevant",
            "the first accepted class wins the slot; no class of lower authority is ranked "
            "ahead of one of higher authority",
            "a slot resting on another class, or a first class of lower authority tier than "
            "another accepted class (with the catalogue), is a violation",
            _fixed("one supporter of each accepted class, the later ones more relevant"),
            precedence_holds,
        ),
        Relation(
            "swap_purpose",
            "the same request under another purpose",
            "a purpose the contract does not permit is refused; another permitted one may "
            "change anything",
            "a compile for an unpermitted purpose is a violation; each other permitted purpose "
            "is a finding naming what changes",
            lambda p, d: f"asked for {p.args['purpose']}",
            purpose_judged,
        ),
        Relation(
            "promote_classes",
            "for each proposition, an item of every class of the catalogue and the corpus but "
            "the weak ones, claiming it with top relevance and approval wording",
            "no class a proposition does not accept is admitted for it",
            "an item of a class the proposition does not accept admitted for it is a violation; "
            "one of an accepted class of lower authority tier than another accepted class is a "
            "finding naming the class",
            _promote_classes_label,
            promotion_judged,
        ),
        Relation(
            "contradict_classes",
            "for each named proposition, an admissible item of the named class contradicting it",
            "an accepted class makes the proposition contradicted, and a required proposition "
            "then blocks the decision; nothing else changes",
            "an accepted class that does not surface, or a required slot that does not block, "
            "is a violation; a class the corpus contradicts with that the proposition does not "
            "accept, and an optional slot that does not block, are findings",
            _contradict_classes_label,
            contradiction_surfaces,
        ),
        Relation(
            "remove_support",
            "every item supporting a proposition is removed; what depends on them stays, blocked",
            "every required proposition then blocks the decision",
            "a required slot that does not block is a violation; an optional one is a finding "
            "(the decision can be ready without it)",
            _fixed("every supporting item removed"),
            support_removed,
        ),
        Relation(
            "crowd",
            "duplicates of each proposition's best supporter, a low-relevance supporter of its "
            "first class and low-relevance context are added",
            "no slot rests on two copies of one record; nothing of barely any relevance enters "
            "beside the evidence",
            "a slot resting on copies of one record (max_items) and a low-relevance item in the "
            "packet (min_relevance) are findings; flips the budget causes are findings",
            _fixed("duplicates and low-relevance items added"),
            crowd_kept_out,
        ),
    )
}


def judge(
    base: CompileOutput, variant: CompileOutput, perturbation: Perturbation, context: Context
) -> list[Verdict]:
    """One verdict per proposition of the contract (whole-variant faults first), in contract
    order. A slot the relation leaves unjudged is a finding when it flipped, else expected."""
    case = Case(perturbation, base, variant, context)
    if _refused_alike(base, variant):
        # Nothing was compiled on either side: no relation about slots or admission applies.
        reason = base.refusal.reason if base.refusal else REFUSED
        return [
            case.verdict(EXPECTED, key, f"refused ({reason}), as the base is")
            for key in case.before
        ]
    verdicts = RELATIONS[perturbation.operator].judge(case)
    judged = {v.proposition for v in verdicts}
    for key in case.before:
        if key not in judged:
            kind = FINDING if case.flipped(key) else EXPECTED
            verdicts.append(case.verdict(kind, key, case.change(key)))
    order = {p.key: i for i, p in enumerate(context.document.contract.propositions)}
    return sorted(
        verdicts, key=lambda v: -1 if v.proposition is None else order.get(v.proposition, 0)
    )


def _refused_alike(base: CompileOutput, variant: CompileOutput) -> bool:
    return (
        base.result is Result.REFUSED
        and variant.result is Result.REFUSED
        and base.refusal == variant.refusal
    )
