"""The judges: functions from a `Case` to its verdicts, and the combinators the registry builds
each operator's judge from.
"""

from __future__ import annotations

from collections.abc import Callable

from compiler._codes import Result, SlotState
from compiler._passes.resolve import expand_roles
from compiler._perturb.flips import REFUSED, admitted_in
from compiler._perturb.operators import CONTAMINANT_PREFIX, LOOK_ALIKE_PREFIX, WEAK_PROMOTION_PREFIX
from compiler._relations.verdicts import EXPECTED, FINDING, VIOLATION, Case, Judge, Kind, Verdict

OPTIONAL = "optional"
"""The cause of a finding on a slot that has lost its support, or is contradicted, and does
not block the decision because the contract makes it optional."""


def _must_not_change(why: str) -> Judge:
    """Any flip is a violation; so is any item the operator added that was admitted."""

    def judge(case: Case) -> list[Verdict]:
        prefix = _ADDED_PREFIX[case.perturbation.operator]
        intruders = sorted(i for i in case.admitted if i.startswith(prefix))
        verdicts = [
            case.verdict(VIOLATION, None, f"{i} was admitted although {why}", [i])
            for i in intruders
        ]
        for key in case.before:
            resting = [i for i in case.resting_on(case.variant, key) if i.startswith(prefix)]
            if case.flipped(key) or resting:
                verdicts.append(case.verdict(
                    VIOLATION, key,
                    f"{case.change(key)}"
                    + (f", resting on {', '.join(resting)}" if resting else "")
                    + f", although {why}",
                    resting,
                ))  # fmt: skip
            else:
                verdicts.append(case.verdict(EXPECTED, key, f"{key} unchanged"))
        return verdicts

    return judge


def _nothing_admitted_for_outsider(case: Case) -> list[Verdict]:
    new_roles = expand_roles(case.args["roles"], case.context.document.directory.role_parents)
    old_roles = set(case.base.request.effective_roles) if case.base.request else set()
    if not new_roles.isdisjoint(old_roles):
        return _changes_are_findings(f"asked by {case.args['principal']}")(case)
    verdicts = [
        case.verdict(VIOLATION, None, f"{i} was admitted for an outsider", [i])
        for i in sorted(case.admitted)
    ]
    for key, state in case.after.items():
        if state in (SlotState.UNKNOWN, REFUSED):
            verdicts.append(case.verdict(EXPECTED, key, f"{key} {state} for an outsider"))
        else:
            ids = case.resting_on(case.variant, key)
            verdicts.append(case.verdict(
                VIOLATION, key, f"{key} {state} for an outsider, on {', '.join(ids)}", ids
            ))  # fmt: skip
    return verdicts


def _must_refuse(case: Case) -> list[Verdict]:
    if case.variant.result is Result.REFUSED:
        reason = case.variant.refusal.reason if case.variant.refusal else "refused"
        return [case.verdict(EXPECTED, key, f"refused ({reason})") for key in case.before]
    return [case.verdict(VIOLATION, None, "compiled although the delegation is revoked")] + [
        case.verdict(VIOLATION, key, f"{key} {state} under a revoked delegation")
        for key, state in case.after.items()
    ]


def _causes(case: Case) -> tuple[str, list[str]]:
    """What moved in the admitted set, and why, in the variant's words."""
    before, after = admitted_in(case.base), case.admitted
    left = sorted(before - after)
    came = sorted(after - before)
    parts = [f"{i} leaves ({case.why_not(i)})" for i in left]
    parts += [f"{i} enters" for i in came]
    if case.variant.result is Result.REFUSED and case.variant.refusal:
        refusal = case.variant.refusal
        detail = f"/{refusal.detail}" if refusal.detail else ""
        parts.append(f"refused: {refusal.reason}{detail}")
    return "; ".join(parts) or "no item moved", [*left, *came]


def _changes_are_findings(what: str | Callable[[Case], str]) -> Judge:
    """Flips are allowed but reported as findings naming their cause; so is a slot that keeps
    its state on other items. Nothing else changes."""

    def judge(case: Case) -> list[Verdict]:
        cause = what(case) if callable(what) else what
        reasons, moved = _causes(case)
        verdicts = []
        for key in case.before:
            was, now = case.resting_on(case.base, key), case.resting_on(case.variant, key)
            if case.flipped(key):
                verdicts.append(
                    case.verdict(FINDING, key, f"{cause}: {case.change(key)} — {reasons}", moved)
                )
            elif was != now:
                verdicts.append(case.verdict(
                    FINDING, key,
                    f"{cause}: {key} stays {case.after[key]} but rests on "
                    f"{', '.join(now) or 'nothing'} instead of {', '.join(was) or 'nothing'} "
                    f"— {reasons}",
                    [*was, *now],
                ))  # fmt: skip
            else:
                verdicts.append(case.verdict(EXPECTED, key, f"{key} unchanged"))
        return verdicts

    return judge


def _plan_must_change(judge: Judge) -> Judge:
    def checked(case: Case) -> list[Verdict]:
        verdicts = judge(case)
        if case.base.plan_id is not None and case.base.plan_id == case.variant.plan_id:
            verdicts.insert(0, case.verdict(VIOLATION, None, "the plan id did not change"))
        return verdicts

    return checked


def _loses_support(on_loss: Kind, loss: str) -> Judge:
    """Hide and substitution: a slot resting on the changed item may lose it (`on_loss`);
    any other flip is a finding."""

    def judge(case: Case) -> list[Verdict]:
        item = case.args["candidate_id"]
        verdicts = []
        for key in case.before:
            rested = item in case.resting_on(case.base, key)
            still = item in case.resting_on(case.variant, key)
            if case.flipped(key) and rested:
                verdicts.append(case.verdict(on_loss, key, loss.format(
                    key=key, item=item, state=case.after[key],
                    cls=case.args.get("evidence_class", ""),
                ), [item]))  # fmt: skip
            elif case.flipped(key):
                verdicts.append(case.verdict(
                    FINDING, key, f"{case.change(key)} — {_causes(case)[0]}", [item]
                ))  # fmt: skip
            elif still and "evidence_class" in case.args:
                verdicts.append(case.verdict(
                    FINDING, key,
                    f"{item} still establishes {key} as a {case.args['evidence_class']}: the "
                    "contract accepts that class for it",
                    [item],
                ))  # fmt: skip
            else:
                verdicts.append(case.verdict(EXPECTED, key, f"{key} unchanged"))
        return verdicts

    return judge


def _weak_never_establishes(case: Case) -> list[Verdict]:
    verdicts = []
    for key in case.before:
        promoted = sorted(
            i for i in case.admitted
            if i.startswith(WEAK_PROMOTION_PREFIX) and key in case.items[i].supports
        )  # fmt: skip
        if promoted:
            classes = sorted({case.items[i].evidence_class for i in promoted})
            verdicts.append(case.verdict(
                VIOLATION, key,
                f"{key} accepts a weak class as proof: {', '.join(promoted)} "
                f"({', '.join(classes)}) claiming approval was admitted"
                + (" and establishes it" if case.after[key] == SlotState.SUPPORTED else ""),
                promoted, cause="+".join(classes),
            ))  # fmt: skip
        elif case.flipped(key):
            verdicts.append(case.verdict(FINDING, key, f"{case.change(key)} — {_causes(case)[0]}"))
        else:
            verdicts.append(case.verdict(EXPECTED, key, f"no weak class establishes {key}"))
    return verdicts


def _becomes_contradicted(keys: Callable[[Case], dict[str, str]]) -> Judge:
    """The propositions `keys` names (each with the class of its contradiction) must read
    contradicted; the others must not change."""

    def judge(case: Case) -> list[Verdict]:
        targets = keys(case)
        verdicts = []
        for key in case.before:
            cls = targets.get(key)
            if cls is None:
                if case.flipped(key):
                    verdicts.append(
                        case.verdict(
                            VIOLATION,
                            key,
                            f"{case.change(key)}, although no item about it was added",
                        )
                    )
                else:
                    verdicts.append(case.verdict(EXPECTED, key, f"{key} unchanged"))
            elif case.after.get(key) == SlotState.CONTRADICTED:
                verdicts.append(_blocks_or_optional(case, key, f"a {cls} contradicts {key}"))
            else:
                verdicts.append(case.verdict(
                    VIOLATION, key,
                    f"{key} reads {case.after.get(key)} although an admissible {cls} of higher "
                    "precedence contradicts it (a contradiction that does not surface)",
                    cause=cls,
                ))  # fmt: skip
        return verdicts

    return judge


def _first_classes(case: Case) -> dict[str, str]:
    return {
        p.key: p.accepted_classes[0]
        for p in case.context.document.contract.propositions
        if p.accepted_classes
    }


def _named_contradiction(case: Case) -> dict[str, str]:
    key = case.args["proposition"]
    spec = case.context.document.contract.proposition(key)
    if spec is None or not spec.accepted_classes:
        return {}
    cls = case.args.get("evidence_class") or spec.accepted_classes[0]
    return {key: cls} if cls in spec.accepted_classes else {}


def _other_entity_admits_nothing_of_the_first(case: Case) -> list[Verdict]:
    first = case.base.request.entity if case.base.request else case.context.document.request.entity
    leaked = sorted(i for i in case.admitted if i in case.items and case.items[i].entity == first)
    verdicts = [
        case.verdict(VIOLATION, None, f"{i} of {first} was admitted for {case.args['entity']}", [i])
        for i in leaked
    ]
    for key, state in case.after.items():
        ids = [i for i in case.resting_on(case.variant, key) if i in leaked]
        if ids:
            verdicts.append(case.verdict(
                VIOLATION, key, f"{key} {state} on {', '.join(ids)}, evidence about {first}", ids
            ))  # fmt: skip
        else:
            verdicts.append(case.verdict(EXPECTED, key, f"{key} {state} for {case.args['entity']}"))
    return verdicts


_ADDED_PREFIX = {"contaminate": CONTAMINANT_PREFIX, "look_alike": LOOK_ALIKE_PREFIX}


def _blocks_or_optional(case: Case, key: str, what: str) -> Verdict:
    """A slot that lost its support or is contradicted: it blocks the decision when it is
    required; an optional one that does not is a finding."""
    slot = case.slot(case.variant, key)
    if slot is None or key in case.variant.blocking:
        return case.verdict(EXPECTED, key, f"{what}: the decision is not ready on it")
    if slot.required:
        return case.verdict(
            VIOLATION, key, f"{what}, yet it does not block the decision although it is required"
        )
    return case.verdict(
        FINDING, key,
        f"{what}, yet the decision can be ready: {key} is optional, so it never blocks",
        cause=OPTIONAL,
    )  # fmt: skip
