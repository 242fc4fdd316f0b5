"""The judges of the contract probes (`compiler._perturb.probes`).

A probe's finding that names a `cause` (a class, a purpose, `optional`, `duplicates`,
`low relevance`) points at something the contract says that a reviewer should confirm; with the
violations, those are the review flags (`flags.review_flags`). A flip a probe causes only
through the budget is a finding without a cause.
"""

from __future__ import annotations

from compiler._codes import Result, SlotState
from compiler._input import Proposition
from compiler._perturb.probes import CROWD_PREFIX, LOW_RELEVANCE, PROMOTION_PREFIX
from compiler._relations.judges import _blocks_or_optional, _causes
from compiler._relations.verdicts import EXPECTED, FINDING, VIOLATION, Case, Verdict

DUPLICATES = "copies of one record"
LOW = "low relevance"


def _tier(case: Case, cls: str) -> int | None:
    return case.context.catalogue.get(cls)


def _tier_words(case: Case, cls: str) -> str:
    tier = _tier(case, cls)
    return f"{cls} (authority tier {tier})" if tier is not None else cls


def _unjudged(case: Case, key: str) -> Verdict:
    """A slot the probe does not speak to: a flip is the budget's doing, a finding."""
    if case.flipped(key):
        return case.verdict(FINDING, key, f"{case.change(key)} — {_causes(case)[0]}")
    return case.verdict(EXPECTED, key, f"{key} unchanged")


def precedence_holds(case: Case) -> list[Verdict]:
    """The first accepted class wins each slot; and, with the catalogue, no class of lower
    authority is ranked ahead of one of higher authority."""
    verdicts = []
    for p in case.context.document.contract.propositions:
        if len(p.accepted_classes) < 2:
            verdicts.append(_unjudged(case, p.key))
            continue
        first = p.accepted_classes[0]
        resting = case.resting_on(case.variant, p.key)
        won = (
            case.items[resting[0]].evidence_class if resting and resting[0] in case.items else None
        )
        better = _better_than(case, p, first)
        if case.variant.result is Result.COMPILED and won != first:
            verdicts.append(case.verdict(
                VIOLATION, p.key,
                f"{p.key} rests on a {won or 'nothing'} although a {first}, its first accepted "
                "class, is at hand: precedence is not honoured",
                resting, cause=won or "",
            ))  # fmt: skip
        elif better:
            verdicts.append(case.verdict(
                VIOLATION, p.key,
                f"{p.key} ranks {_tier_words(case, first)} ahead of "
                f"{_tier_words(case, better)}: with both at hand the slot rests on the lower "
                "authority",
                resting, cause=first,
            ))  # fmt: skip
        else:
            verdicts.append(case.verdict(EXPECTED, p.key, f"{p.key} rests on its first class"))
    return verdicts


def _better_than(case: Case, p: Proposition, cls: str) -> str | None:
    """An accepted class of `p` of strictly higher authority than `cls`, if the catalogue
    says so."""
    tier = _tier(case, cls)
    if tier is None:
        return None
    ranked = [(t, c) for c in p.accepted_classes if (t := _tier(case, c)) is not None and t < tier]
    return min(ranked)[1] if ranked else None


def purpose_judged(case: Case) -> list[Verdict]:
    """Another permitted purpose is a finding naming what changes; a purpose the contract does
    not permit must be refused."""
    purpose = case.args["purpose"]
    contract = case.context.document.contract
    if purpose not in contract.purposes:
        if case.variant.result is Result.REFUSED:
            return [case.verdict(EXPECTED, key, f"refused for {purpose}") for key in case.before]
        return [
            case.verdict(
                VIOLATION, None, f"compiled for {purpose}, which the contract does not permit"
            )
        ] + [_unjudged(case, key) for key in case.before]
    reasons, moved = _causes(case)
    changed = [case.change(key) for key in case.before if case.flipped(key)]
    what = "; ".join([*changed, reasons] if moved or changed else ["the same packet"])
    verdicts = [
        case.verdict(
            FINDING, None, f"the contract also permits {purpose}: {what}", moved, cause=purpose
        )
    ]
    for key in case.before:
        kind = FINDING if case.flipped(key) else EXPECTED
        verdicts.append(case.verdict(kind, key, f"for {purpose}: {case.change(key)}"))
    return verdicts


def promotion_judged(case: Case) -> list[Verdict]:
    """An item of a class a proposition does not accept is never admitted for it; one of a
    class it accepts below its first class's authority is a finding."""
    verdicts = []
    for p in case.context.document.contract.propositions:
        promoted = sorted(
            i for i in case.admitted
            if i.startswith(PROMOTION_PREFIX) and p.key in case.items[i].supports
        )  # fmt: skip
        found = []
        for item in promoted:
            cls = case.items[item].evidence_class
            if cls not in p.accepted_classes:
                found.append(case.verdict(
                    VIOLATION, p.key,
                    f"{item} ({cls}) claiming approval was admitted for {p.key}, which does not "
                    f"accept {cls}",
                    [item], cause=cls,
                ))  # fmt: skip
            elif p.accepted_classes and _better_than(case, p, cls):
                found.append(case.verdict(
                    FINDING, p.key,
                    f"{p.key} can be established by a {_tier_words(case, cls)}, below "
                    f"{_tier_words(case, _better_than(case, p, cls) or '')}: {item} claiming "
                    "approval was admitted",
                    [item], cause=cls,
                ))  # fmt: skip
        verdicts += found or [
            case.verdict(EXPECTED, p.key, f"only the classes {p.key} accepts are admitted for it")
        ]
    return verdicts


def contradiction_surfaces(case: Case) -> list[Verdict]:
    """Each named class contradicting its proposition: one the proposition accepts must make it
    contradicted, and a required proposition must then block; one it does not accept (a class
    the corpus contradicts it with) is a finding, a disagreement that would not surface."""
    targets: dict[str, str] = case.args["classes"]
    contract = case.context.document.contract
    verdicts = []
    for key in case.before:
        cls = targets.get(key)
        spec = contract.proposition(key)
        if cls is None or spec is None:
            if case.flipped(key):
                verdicts.append(case.verdict(
                    VIOLATION, key, f"{case.change(key)}, although no item about it was added"
                ))  # fmt: skip
            else:
                verdicts.append(case.verdict(EXPECTED, key, f"{key} unchanged"))
        elif cls not in spec.accepted_classes:
            if case.after.get(key) == SlotState.CONTRADICTED:
                verdicts.append(case.verdict(EXPECTED, key, f"{key} contradicted"))
            else:
                verdicts.append(case.verdict(
                    FINDING, key,
                    f"a {cls} contradicting {key} does not surface: {key} does not accept {cls}, "
                    "which the corpus uses to contradict it",
                    cause=cls,
                ))  # fmt: skip
        elif case.after.get(key) != SlotState.CONTRADICTED:
            verdicts.append(case.verdict(
                VIOLATION, key,
                f"{key} reads {case.after.get(key)} although an admissible {cls} contradicts it "
                "(a contradiction that does not surface)",
                cause=cls,
            ))  # fmt: skip
        else:
            verdicts.append(_blocks_or_optional(case, key, f"a {cls} contradicts {key}"))
    return verdicts


def support_removed(case: Case) -> list[Verdict]:
    """Without any support, every required proposition blocks the decision; an optional one
    that does not is a finding."""
    verdicts = []
    for key in case.before:
        state = case.after.get(key)
        if case.variant.result is not Result.COMPILED or state == SlotState.SUPPORTED:
            verdicts.append(_unjudged(case, key))
        else:
            verdicts.append(_blocks_or_optional(case, key, f"without any support {key} is {state}"))
    return verdicts


def crowd_kept_out(case: Case) -> list[Verdict]:
    """Duplicates of one record sharing a slot, and items of barely any relevance in the packet
    beside the evidence that establishes a slot, are findings naming the contract's setting
    that let them in."""
    contract = case.context.document.contract
    packet = {i.id: i for i in case.variant.packet}
    verdicts = []
    context = sorted(i for i in packet if i.startswith(f"{CROWD_PREFIX}context-"))
    for item in context:
        # One finding per level that enters, so that lowering min_relevance adds a cause and
        # raising it only takes causes away.
        level = item.removeprefix(f"{CROWD_PREFIX}context-")
        verdicts.append(case.verdict(
            FINDING, None,
            f"context of relevance {level} enters the packet (min_relevance "
            f"{contract.policy.min_relevance})",
            [item], cause=f"relevance {level}",
        ))  # fmt: skip
    for p in contract.propositions:
        resting = case.resting_on(case.variant, p.key)
        contents: dict[str, list[str]] = {}
        for item in resting:
            if item in packet:
                contents.setdefault(packet[item].content, []).append(item)
        repeated = max(contents.values(), key=len, default=[])
        low = [i for i in resting[1:] if i.startswith(f"{CROWD_PREFIX}low:")]
        found = []
        # One finding per number of copies reached, so that raising max_items adds a cause
        # and lowering it only takes causes away.
        for n in range(2, len(repeated) + 1):
            found.append(case.verdict(
                FINDING, p.key,
                f"{p.key} rests on {n} copies of one record ({', '.join(repeated[:n])}): "
                f"max_items {p.max_items} lets repetition into the packet",
                repeated[:n], cause=f"{n} {DUPLICATES}",
            ))  # fmt: skip
        if low:
            found.append(case.verdict(
                FINDING, p.key,
                f"{low[0]} (relevance {LOW_RELEVANCE}) corroborates {p.key}: min_relevance "
                f"{contract.policy.min_relevance} lets evidence that barely concerns it in",
                low, cause=LOW,
            ))  # fmt: skip
        verdicts += found or [_unjudged(case, p.key)]
    return verdicts
