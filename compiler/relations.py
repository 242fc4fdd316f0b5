"""Relations: what each perturbation must and must not change, and the verdicts that judge it.

Every operator of `perturb.py` has one `Relation`, kept here as data: a plain-language label
for a perturbation of it ("one day later", "facility-F102 (facility record) hidden"), what the
operator does, the relation it must keep, how a result is judged, and the judge itself.

`judge(base, variant, perturbation, context)` gives one `Verdict` for every proposition of the
contract, flipped or not, and one more for each fault of the variant as a whole (an admitted
item that must not be, a compile that should have been refused):

* `violation` — the relation is broken: the contract or the compiler is wrong;
* `finding` — allowed, but a reviewer should know (a slot resting on a single source, a
  decision that changes within a day and the items that cause it);
* `expected` — the perturbation's documented consequence, or nothing changed.

`VariantExpectation` is an owner's expectation on one perturbation of one scenario, checked by
`slot_failures`, the same code that checks a base's expected slots. `corpus_findings` reads a
contract against its corpus, without compiling. docs/verdicts.md has the table of relations.
Pure: no clock, no randomness, no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .codes import Result, SlotState
from .models import Candidate, CompileInput, CompileOutput, Slot
from .perturb import (
    CONTAMINANT_PREFIX,
    LOOK_ALIKE_PREFIX,
    REFUSED,
    WEAK_PROMOTION_PREFIX,
    Perturbation,
    admitted_in,
    slot_states,
)
from .resolve import expand_roles

Kind = Literal["violation", "finding", "expected"]
VIOLATION: Final[Kind] = "violation"
FINDING: Final[Kind] = "finding"
EXPECTED: Final[Kind] = "expected"
SEVERITY = {EXPECTED: 0, FINDING: 1, VIOLATION: 2}


class Verdict(BaseModel):
    """One judgement: of a slot (`proposition`), or of the variant as a whole (None)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Kind
    proposition: str | None
    message: str
    perturbation: str | None  # the perturbation's name; None for a corpus-derived finding
    items: tuple[str, ...] = ()  # the items (ids) the message names as the cause

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


@dataclass(frozen=True)
class Context:
    """What a judge reads besides the two outputs: the base input, the variant's input, and
    the catalogue's weak classes."""

    document: CompileInput
    variant_document: CompileInput
    weak_classes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Case:
    """One variant against its base, with the look-ups every judge needs."""

    perturbation: Perturbation
    base: CompileOutput
    variant: CompileOutput
    context: Context

    @cached_property
    def name(self) -> str:
        return self.perturbation.name

    @property
    def args(self) -> dict[str, Any]:
        return self.perturbation.args

    @cached_property
    def before(self) -> dict[str, str]:
        return slot_states(self.base, self.context.document)

    @cached_property
    def after(self) -> dict[str, str]:
        return slot_states(self.variant, self.context.document)

    @cached_property
    def items(self) -> dict[str, Candidate]:
        return {c.id: c for c in self.context.variant_document.candidates}

    @cached_property
    def admitted(self) -> set[str]:
        return admitted_in(self.variant)

    def flipped(self, key: str) -> bool:
        return self.before.get(key) != self.after.get(key)

    def slot(self, output: CompileOutput, key: str) -> Slot | None:
        return next((s for s in output.slots if s.proposition == key), None)

    def resting_on(self, output: CompileOutput, key: str) -> tuple[str, ...]:
        slot = self.slot(output, key)
        return slot.resource_ids if slot is not None else ()

    def change(self, key: str) -> str:
        return f"{key} {self.before.get(key)} → {self.after.get(key)}"

    def verdict(self, kind: Kind, key: str | None, message: str, items: Iterable[str] = ()):
        return Verdict(
            kind=kind, proposition=key, message=message, perturbation=self.name,
            items=tuple(items),
        )  # fmt: skip

    def why_not(self, item_id: str) -> str:
        """Why the variant rejected an item, as `reason/detail`."""
        for r in self.variant.rejected:
            if r["id"] == item_id:
                return r["reason"] + (f"/{r['detail']}" if r["detail"] else "")
        return "absent"


Judge = Callable[[Case], list[Verdict]]


@dataclass(frozen=True)
class Relation:
    operator: str
    description: str  # what the operator does
    relation: str  # what must and must not change
    judged: str  # how a result is judged
    label: Callable[[Perturbation, CompileInput], str]
    judge: Judge


# --------------------------------------------------------------------------- labels


def _class_of(document: CompileInput, item_id: str) -> str:
    item = next((c for c in document.candidates if c.id == item_id), None)
    return item.evidence_class.replace("_", " ") if item is not None else "unknown class"


def _days(p: Perturbation, _: CompileInput) -> str:
    days = p.args["days"]
    if abs(days) == 1:
        return "one day later" if days > 0 else "one day earlier"
    return f"{abs(days)} days {'later' if days > 0 else 'earlier'}"


def _item_label(verb: str) -> Callable[[Perturbation, CompileInput], str]:
    def label(p: Perturbation, document: CompileInput) -> str:
        item = p.args["candidate_id"]
        return f"{item} ({_class_of(document, item)}) {verb}"

    return label


def _substitute_label(p: Perturbation, _: CompileInput) -> str:
    return f"{p.args['candidate_id']} recast as a {p.args['evidence_class'].replace('_', ' ')}"


def _principal_label(p: Perturbation, _: CompileInput) -> str:
    return f"asked by {p.args['principal']} ({', '.join(p.args['roles'])})"


def _weak_label(p: Perturbation, _: CompileInput) -> str:
    classes = " or ".join(c.replace("_", " ") for c in p.args["weak_classes"])
    return f"a {classes} claiming approval of each proposition"


def _contradict_label(p: Perturbation, document: CompileInput) -> str:
    spec = document.contract.proposition(p.args["proposition"])
    cls = p.args.get("evidence_class") or (
        spec.accepted_classes[0] if spec and spec.accepted_classes else "?"
    )
    return f"a {cls.replace('_', ' ')} contradicting {p.args['proposition']}"


def _fixed(text: str) -> Callable[[Perturbation, CompileInput], str]:
    return lambda p, document: text


def label(perturbation: Perturbation, document: CompileInput) -> str:
    """The perturbation in plain language, for a reviewer."""
    return RELATIONS[perturbation.operator].label(perturbation, document)


# --------------------------------------------------------------------------- judges


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


def _date_cause(case: Case) -> str:
    on = case.variant.request.decision_date if case.variant.request else None
    shown = label(case.perturbation, case.context.document)
    return f"{shown}, deciding on {on}" if on else shown


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
                promoted,
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
                verdicts.append(case.verdict(EXPECTED, key, f"a {cls} contradicts {key}"))
            else:
                verdicts.append(case.verdict(
                    VIOLATION, key,
                    f"{key} reads {case.after.get(key)} although an admissible {cls} of higher "
                    "precedence contradicts it (a contradiction that does not surface)",
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


# --------------------------------------------------------------------------- the registry


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
            "one admitted item is removed, with what depends on it",
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


def worst(verdicts: Iterable[Verdict]) -> Kind:
    return max((v.kind for v in verdicts), key=SEVERITY.__getitem__, default=EXPECTED)


# --------------------------------------------------------------------------- expectations


class VariantExpectation(BaseModel):
    """An owner's expectation on one perturbation of a scenario: "a day after the addendum
    expires, `continuation_rule` is unknown" is `{"operator": "shift_days", "args": {"days":
    32}, "proposition": "continuation_rule", "state": "unknown"}`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    operator: str = Field(min_length=1)
    args: dict[str, Any] = {}
    proposition: str = Field(min_length=1)
    state: Literal["supported", "unknown", "contradicted", "refused"]

    @model_validator(mode="after")
    def _replayable(self) -> VariantExpectation:
        self.perturbation.checked_args()
        return self

    @property
    def perturbation(self) -> Perturbation:
        return Perturbation(self.operator, dict(self.args))


def slot_failures(states: Mapping[str, str], expected: Mapping[str, str]) -> list[dict[str, Any]]:
    """Each expected slot state that the compile does not have: the one check of expected
    slots, for a base and for a variant alike."""
    return [
        {"what": "slot", "key": key, "expected": want, "actual": states.get(key, "missing")}
        for key, want in expected.items()
        if states.get(key, "missing") != want
    ]


def _signature(operator: str, args: Mapping[str, Any]) -> str:
    return json.dumps([operator, args], sort_keys=True)


def expectation_failures(
    rows: Sequence[Mapping[str, Any]], expectations: Iterable[VariantExpectation]
) -> list[dict[str, Any]]:
    """Variant expectations against a sweep's rows (`{"operator", "args", "name", "slots"}`);
    an expectation whose perturbation was not run fails with `actual` "not run"."""
    by_signature = {_signature(r["operator"], r["args"]): r for r in rows}
    failures = []
    for e in expectations:
        row = by_signature.get(_signature(e.operator, e.args))
        states = row["slots"] if row is not None else {e.proposition: "not run"}
        failures += [
            {**f, "perturbation": e.perturbation.name}
            for f in slot_failures(states, {e.proposition: e.state})
        ]
    return failures


def missing_perturbations(
    suite: Sequence[Perturbation], expectations: Iterable[VariantExpectation]
) -> list[Perturbation]:
    """The perturbations the expectations name that the suite lacks, each once."""
    have = {_signature(p.operator, p.args) for p in suite}
    extra: dict[str, Perturbation] = {}
    for e in expectations:
        signature = _signature(e.operator, e.args)
        if signature not in have:
            extra.setdefault(signature, e.perturbation)
    return list(extra.values())


# --------------------------------------------------------------------------- corpus findings


def corpus_findings(
    contract: Any, candidates: Iterable[Candidate], tiers: Mapping[str, str] | None = None
) -> list[Verdict]:
    """What the contract and the corpus say about each other, without compiling:

    * items that claim a proposition whose accepted classes do not include theirs, one finding
      per (proposition, class), with the class's authority tier when `tiers` names it;
    * propositions that no item of the corpus can ever support (none claims it with an
      accepted class).
    """
    tiers = tiers or {}
    candidates = sorted(candidates, key=lambda c: c.id)
    findings = []
    for p in contract.propositions:
        unaccepted: dict[str, list[str]] = {}
        for c in candidates:
            claims = p.key in (*c.supports, *c.contradicts)
            if claims and c.evidence_class not in p.accepted_classes:
                unaccepted.setdefault(c.evidence_class, []).append(c.id)
        for cls, ids in sorted(unaccepted.items()):
            tier = f" (authority tier: {tiers[cls]})" if cls in tiers else ""
            noun = "item claims" if len(ids) == 1 else "items claim"
            findings.append(Verdict(
                kind=FINDING, proposition=p.key, perturbation=None, items=tuple(ids),
                message=f"{len(ids)} {cls} {noun} {p.key}{tier}, which does not accept "
                f"{cls}: intended?",
            ))  # fmt: skip
        if not any(
            p.key in c.supports and c.evidence_class in p.accepted_classes for c in candidates
        ):
            accepted = ", ".join(p.accepted_classes) or "no class"
            findings.append(Verdict(
                kind=FINDING, proposition=p.key, perturbation=None,
                message=f"no item of the corpus can ever support {p.key} (it accepts {accepted})",
            ))  # fmt: skip
    return findings


__all__ = [
    "EXPECTED",
    "FINDING",
    "RELATIONS",
    "VIOLATION",
    "Case",
    "Context",
    "Relation",
    "VariantExpectation",
    "Verdict",
    "corpus_findings",
    "expectation_failures",
    "judge",
    "label",
    "missing_perturbations",
    "slot_failures",
    "worst",
]
