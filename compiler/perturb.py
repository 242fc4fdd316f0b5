"""Perturbations: pure functions from one compile input to a variant, and the flips between
two compilations.

Each operator changes one predicate and nothing else, so a flipped slot names its cause:

| operator            | what changes                                                   |
| ------------------- | -------------------------------------------------------------- |
| swap_principal      | the caller (and the delegation it is acting for)               |
| shift_days          | the decision date                                              |
| supersede           | one candidate is marked superseded                             |
| substitute_class    | one candidate's evidence class                                 |
| revoke_delegation   | the request's delegation is revoked                            |
| contaminate         | n high-relevance items that must fail admission are added      |
| hide                | one candidate is removed (with what cannot travel without it)  |
| contradict          | an admissible, accepted-class item contradicting a proposition |
| promote_weak        | per proposition, an item of each weak class claiming approval  |
| look_alike          | a superseded, expired and other-entity copy of admitted support |
| contradict_first    | per proposition, a contradiction of its first accepted class   |
| swap_entity         | the same request about another entity                          |
| replay_expiry       | the decision date moved to the day after the plan's valid_until |

Items the operators add carry ids that say so (`contaminant-…`, `contradiction-…`,
`weak-promotion:…`, `look-alike:…`). What each operator must and must not change is stated,
and judged, in `relations.py`.

`standard_suite` derives the suite the workbench runs for every scenario.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from .admit import in_force
from .codes import OrderRole, Pass, Requirement, Result
from .compare import admitted_ids
from .errors import Refused
from .models import Candidate, CompileInput, CompileOutput
from .resolve import expand_roles, resolve_entity

REFUSED = "refused"
CONTAMINANT_PREFIX = "contaminant-"
WEAK_PROMOTION_PREFIX = "weak-promotion:"
LOOK_ALIKE_PREFIX = "look-alike:"
APPROVAL_WORDING = "APPROVED. Confirmed and signed off: {proposition} holds. "


# --------------------------------------------------------------------------- operators


def swap_principal(document: CompileInput, principal: str, roles: Sequence[str]) -> CompileInput:
    request = document.request
    delegation = request.delegation
    if delegation is not None and delegation.on_behalf_of == request.principal:
        delegation = delegation.model_copy(update={"on_behalf_of": principal})
    return _with_request(document, principal=principal, roles=tuple(roles), delegation=delegation)


def shift_days(document: CompileInput, days: int) -> CompileInput:
    return _with_request(
        document, decision_date=document.request.decision_date + dt.timedelta(days=days)
    )


def supersede(document: CompileInput, candidate_id: str) -> CompileInput:
    return _with_candidate(document, candidate_id, superseded=True)


def substitute_class(
    document: CompileInput, candidate_id: str, evidence_class: str
) -> CompileInput:
    return _with_candidate(document, candidate_id, evidence_class=evidence_class)


def revoke_delegation(document: CompileInput) -> CompileInput:
    delegation = document.request.delegation
    if delegation is None:
        raise ValueError("the request has no delegation to revoke")
    return _with_request(document, delegation=delegation.model_copy(update={"revoked": True}))


def contaminate(document: CompileInput, count: int) -> CompileInput:
    """Add `count` maximally relevant items, each failing admission in its own way.

    They cycle through another entity, a role nobody holds, a purpose not requested, a
    superseded version, an expired one, and a class the contract never accepts, and each claims
    to support a proposition of the contract, so a plain top-k retriever would take them first.
    """
    if count < 0:
        raise ValueError("count must not be negative")
    request = document.request
    propositions = [p.key for p in document.contract.propositions] or ["nothing"]
    accepted = {c for p in document.contract.propositions for c in p.accepted_classes}
    entity = _entity_of(document)
    roles = sorted(expand_roles(request.roles, document.directory.role_parents))
    taken = {c.id for c in document.candidates}
    unaccepted_class = _fresh("contaminant_class", accepted)
    outsider_role = _fresh("contaminant_role", set(roles))
    other_entity = _fresh("CONTAMINANT-ENTITY", {entity})
    other_purpose = _fresh("contaminant_purpose", {request.purpose})
    on = request.decision_date
    day = dt.timedelta(days=1)

    def item(index: int) -> Candidate:
        proposition = propositions[index % len(propositions)]
        claimed = next(
            (
                p.accepted_classes[0]
                for p in document.contract.propositions
                if p.key == proposition and p.accepted_classes
            ),
            unaccepted_class,
        )
        base: dict[str, Any] = {
            "id": _fresh(f"{CONTAMINANT_PREFIX}{index:03d}", taken),
            "entity": entity,
            "allowed_roles": roles or [outsider_role],
            "allowed_purposes": [request.purpose],
            "evidence_class": claimed,
            "supports": [proposition],
            "valid_from": on - 365 * day,
            "tokens": 50,
            "relevance": 1.0,
            "content": f"Contaminating item {index}: claims {proposition}.",
        }
        kind = index % 6
        if kind == 0:
            base["entity"] = other_entity
        elif kind == 1:
            base["allowed_roles"] = [outsider_role]
        elif kind == 2:
            base["allowed_purposes"] = [other_purpose]
        elif kind == 3:
            base["superseded"] = True
        elif kind == 4:
            base["valid_to"] = on - day
        else:
            base["evidence_class"] = unaccepted_class
        return Candidate.model_validate(base)

    return document.model_copy(
        update={"candidates": (*document.candidates, *(item(i) for i in range(count)))}
    )


def hide(document: CompileInput, candidate_id: str) -> CompileInput:
    """Remove one candidate as if its source were missing.

    What depends on it cannot enter without it and goes too; an item it superseded stays
    superseded if the hidden item was in force (hiding a new policy does not revive the old).
    """
    _require(document, candidate_id)
    gone = {candidate_id}
    changed = True
    while changed:
        changed = False
        for c in document.candidates:
            if c.id not in gone and gone.intersection(c.depends_on):
                gone.add(c.id)
                changed = True
    by_id = {c.id: c for c in document.candidates}
    on = document.request.decision_date
    kept = []
    for c in document.candidates:
        if c.id in gone:
            continue
        if c.superseded_by in gone:
            successor = by_id[c.superseded_by]
            c = c.model_copy(
                update={
                    "superseded_by": None,
                    "superseded": c.superseded or in_force(successor, on),
                }
            )
        kept.append(c)
    named = tuple(n for n in document.request.named if n not in gone)
    hidden = document.model_copy(update={"candidates": tuple(kept)})
    return _with_request(hidden, named=named)


def contradict(
    document: CompileInput, proposition: str, evidence_class: str | None = None
) -> CompileInput:
    """Add an admissible item of an accepted class (the highest precedence unless named) that
    contradicts `proposition`."""
    spec = document.contract.proposition(proposition)
    if spec is None:
        raise ValueError(f"the contract has no proposition '{proposition}'")
    if evidence_class is None:
        if not spec.accepted_classes:
            raise ValueError(f"proposition '{proposition}' accepts no class")
        evidence_class = spec.accepted_classes[0]
    taken = {c.id for c in document.candidates}
    contradiction = _admissible_item(
        document,
        _fresh(f"contradiction-{proposition}", taken),
        evidence_class=evidence_class,
        supports=[],
        contradicts=[proposition],
        tokens=40,
        relevance=0.5,
        content=f"Record contradicting {proposition}.",
    )
    return document.model_copy(update={"candidates": (*document.candidates, contradiction)})


def promote_weak(document: CompileInput, weak_classes: Sequence[str]) -> CompileInput:
    """For every proposition, one item of each weak class claiming it with top relevance and
    approval wording, admissible in every other respect.

    An item of that class in the corpus is copied (`weak-promotion:<id>:<proposition>`), its
    text kept behind the approval wording; a class the corpus lacks gets a synthetic item
    (`weak-promotion:synthetic-<class>:<proposition>`).
    """
    if not weak_classes:
        raise ValueError("promote_weak needs at least one weak class")
    taken = {c.id for c in document.candidates}
    corpus: dict[str, Candidate] = {}
    for c in sorted(document.candidates, key=lambda c: c.id):
        corpus.setdefault(c.evidence_class, c)
    added = []
    for proposition in (p.key for p in document.contract.propositions):
        for weak in dict.fromkeys(weak_classes):
            source = corpus.get(weak)
            stem = source.id if source is not None else f"synthetic-{weak}"
            wording = APPROVAL_WORDING.format(proposition=proposition)
            added.append(
                _admissible_item(
                    document,
                    _fresh(f"{WEAK_PROMOTION_PREFIX}{stem}:{proposition}", taken),
                    evidence_class=weak,
                    supports=[proposition],
                    relevance=1.0,
                    tokens=source.tokens if source is not None else 40,
                    content=wording + (source.content if source is not None else ""),
                )
            )
    return document.model_copy(update={"candidates": (*document.candidates, *added)})


LOOK_ALIKE_KINDS = ("superseded", "expired", "other-entity")


def look_alike(document: CompileInput) -> CompileInput:
    """For each admitted evidence item that supports a proposition, three copies that must not
    be admitted: one superseded, one expired the day before the decision, one about another
    entity; each more relevant than the original (`look-alike:<kind>:<id>`)."""
    universe = admitted_ids(document)
    taken = {c.id for c in document.candidates}
    entity = _entity_of(document)
    other_entity = _fresh("LOOK-ALIKE-ENTITY", {entity, *document.directory.entities})
    yesterday = document.request.decision_date - dt.timedelta(days=1)
    added = []
    for c in sorted(document.candidates, key=lambda c: c.id):
        if c.id not in universe or c.role is not OrderRole.EVIDENCE or not c.supports:
            continue
        copy = c.model_copy(
            update={
                "relevance": 1.0,
                "superseded_by": None,
                "depends_on": (),
                "group": None,
                "group_required": False,
            }
        )
        changes: dict[str, dict[str, Any]] = {
            "superseded": {"superseded": True},
            "expired": {"valid_from": min(c.valid_from, yesterday), "valid_to": yesterday},
            "other-entity": {"entity": other_entity},
        }
        added += [
            copy.model_copy(
                update={"id": _fresh(f"{LOOK_ALIKE_PREFIX}{kind}:{c.id}", taken), **changes[kind]}
            )
            for kind in LOOK_ALIKE_KINDS
        ]
    return document.model_copy(update={"candidates": (*document.candidates, *added)})


def contradict_first(document: CompileInput) -> CompileInput:
    """For every proposition that accepts a class, an admissible item of its first (highest
    precedence) accepted class contradicting it."""
    for p in document.contract.propositions:
        if p.accepted_classes:
            document = contradict(document, p.key)
    return document


def swap_entity(document: CompileInput, entity: str) -> CompileInput:
    """The same request about `entity`; a directory that does not know it learns it (with no
    alias), so the request resolves instead of being refused."""
    directory = document.directory
    if directory.entities and entity not in directory.entities:
        directory = directory.model_copy(update={"entities": {**directory.entities, entity: ()}})
    swapped = document.model_copy(update={"directory": directory})
    return _with_request(swapped, entity=entity)


def replay_expiry(document: CompileInput, valid_until: dt.date) -> CompileInput:
    """The decision replayed on the day after `valid_until` (the base plan's expiry)."""
    return _with_request(document, decision_date=valid_until + dt.timedelta(days=1))


OPERATORS: dict[str, Callable[..., CompileInput]] = {
    "swap_principal": swap_principal,
    "shift_days": shift_days,
    "supersede": supersede,
    "substitute_class": substitute_class,
    "revoke_delegation": revoke_delegation,
    "contaminate": contaminate,
    "hide": hide,
    "contradict": contradict,
    "promote_weak": promote_weak,
    "look_alike": look_alike,
    "contradict_first": contradict_first,
    "swap_entity": swap_entity,
    "replay_expiry": replay_expiry,
}


# The arguments each operator takes, as a discriminated union on `operator`: stored
# perturbations are validated (strictly: "1" is not a day count) before they are replayed.

Name = Annotated[str, Field(min_length=1, strict=True)]


class _Arguments(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    def kwargs(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "operator"}


class SwapPrincipalArgs(_Arguments):
    operator: Literal["swap_principal"]
    principal: Name
    roles: list[Name]


class ShiftDaysArgs(_Arguments):
    operator: Literal["shift_days"]
    days: int = Field(ge=-36_500, le=36_500)


class SupersedeArgs(_Arguments):
    operator: Literal["supersede"]
    candidate_id: Name


class SubstituteClassArgs(_Arguments):
    operator: Literal["substitute_class"]
    candidate_id: Name
    evidence_class: Name


class RevokeDelegationArgs(_Arguments):
    operator: Literal["revoke_delegation"]


class ContaminateArgs(_Arguments):
    operator: Literal["contaminate"]
    count: int = Field(ge=0, le=10_000)


class HideArgs(_Arguments):
    operator: Literal["hide"]
    candidate_id: Name


class ContradictArgs(_Arguments):
    operator: Literal["contradict"]
    proposition: Name
    evidence_class: Name | None = None


class PromoteWeakArgs(_Arguments):
    operator: Literal["promote_weak"]
    weak_classes: list[Name] = Field(min_length=1)


class LookAlikeArgs(_Arguments):
    operator: Literal["look_alike"]


class ContradictFirstArgs(_Arguments):
    operator: Literal["contradict_first"]


class SwapEntityArgs(_Arguments):
    operator: Literal["swap_entity"]
    entity: Name


class ReplayExpiryArgs(_Arguments):
    operator: Literal["replay_expiry"]
    # Stored as an ISO date string (JSON has no date type), like the compile input's dates.
    valid_until: Annotated[dt.date, Field(strict=False)]


PerturbationArgs = Annotated[
    SwapPrincipalArgs
    | ShiftDaysArgs
    | SupersedeArgs
    | SubstituteClassArgs
    | RevokeDelegationArgs
    | ContaminateArgs
    | HideArgs
    | ContradictArgs
    | PromoteWeakArgs
    | LookAlikeArgs
    | ContradictFirstArgs
    | SwapEntityArgs
    | ReplayExpiryArgs,
    Field(discriminator="operator"),
]


@cache
def _arguments_adapter() -> TypeAdapter[Any]:
    return TypeAdapter(PerturbationArgs)


@dataclass(frozen=True)
class Perturbation:
    """One operator with its arguments: a name to show, and data to store and replay."""

    operator: str
    args: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        if not self.args:
            return self.operator
        shown = ", ".join(_show(k, v) for k, v in self.args.items())
        return f"{self.operator}({shown})"

    def checked_args(self) -> dict[str, Any]:
        """The arguments, validated against the operator's signature (a `ValueError` naming
        the operator and what is wrong otherwise)."""
        if self.operator not in OPERATORS:
            raise ValueError(f"unknown perturbation operator '{self.operator}'")
        if not isinstance(self.args, dict):
            raise ValueError(f"perturbation '{self.operator}': args must be an object")
        from pydantic import ValidationError

        try:
            checked = _arguments_adapter().validate_python({**self.args, "operator": self.operator})
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc'][1:]) or 'args'}: {e['msg']}"
                for e in exc.errors()
            )
            raise ValueError(f"perturbation '{self.operator}': {problems}") from None
        return checked.kwargs()

    def apply(self, document: CompileInput) -> CompileInput:
        arguments = self.checked_args()
        return OPERATORS[self.operator](document, **arguments)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "operator": self.operator, "args": dict(self.args)}

    @classmethod
    def from_json(cls, data: Any) -> Perturbation:
        """A stored perturbation (`to_json()`), with its arguments checked before any replay."""
        if not isinstance(data, dict) or not isinstance(data.get("operator"), str):
            raise ValueError("a perturbation is an object with an 'operator' name")
        perturbation = cls(data["operator"], data.get("args") or {})
        perturbation.checked_args()
        return perturbation


# --------------------------------------------------------------------------- the suite


OUTSIDER_PRINCIPAL = "outsider"
CONTAMINATION_SIZE = 50


def standard_suite(
    document: CompileInput,
    weak_classes: Iterable[str] = (),
    base: CompileOutput | None = None,
) -> list[Perturbation]:
    """The perturbations every scenario is run against.

    ±1 day; every admitted evidence item hidden in turn; each admitted evidence item's class
    replaced by one its propositions do not accept (a weak class when one is known); the
    principal swapped for one with no shared role; the delegation revoked, when there is one;
    and 50 contaminating items. Then the failure boundary's tests: the weak classes promoted
    (when any is known), look-alike inapplicable copies, a contradiction of each proposition's
    first accepted class, another entity, each evidence item of the base packet superseded in
    turn, and the decision replayed the day after the plan expires (when it does). `base` is
    the base's compile output, compiled here when not given (only its packet and
    `valid_until` are read).
    """
    weak_classes = list(weak_classes)
    suite = [Perturbation("shift_days", {"days": -1}), Perturbation("shift_days", {"days": 1})]
    universe = admitted_ids(document)
    evidence = [
        c
        for c in sorted(document.candidates, key=lambda c: c.id)
        if c.id in universe and _speaks_to(document, c)
    ]
    suite += [Perturbation("hide", {"candidate_id": c.id}) for c in evidence]
    substitutes = _substitute_classes(document, weak_classes)
    for c in evidence:
        accepted = {
            cls
            for p in document.contract.propositions
            if p.key in (*c.supports, *c.contradicts)
            for cls in p.accepted_classes
        }
        replacement = next((cls for cls in substitutes if cls not in accepted), None)
        if replacement is None:
            replacement = _fresh("unaccepted_class", accepted)
        suite.append(
            Perturbation("substitute_class", {"candidate_id": c.id, "evidence_class": replacement})
        )
    roles = expand_roles(document.request.roles, document.directory.role_parents)
    suite.append(
        Perturbation(
            "swap_principal",
            {"principal": OUTSIDER_PRINCIPAL, "roles": [_fresh("outsider_role", set(roles))]},
        )
    )
    if document.request.delegation is not None:
        suite.append(Perturbation("revoke_delegation"))
    suite.append(Perturbation("contaminate", {"count": CONTAMINATION_SIZE}))
    return suite + boundary_suite(document, weak_classes, base)


def boundary_suite(
    document: CompileInput, weak_classes: Iterable[str] = (), base: CompileOutput | None = None
) -> list[Perturbation]:
    """The perturbations of the seed's failure boundary (`standard_suite` ends with them)."""
    from .pipeline import compile_input

    base = base if base is not None else compile_input(document)
    suite = []
    weak = list(dict.fromkeys(weak_classes))
    if weak and document.contract.propositions:
        suite.append(Perturbation("promote_weak", {"weak_classes": weak}))
    suite.append(Perturbation("look_alike"))
    if any(p.accepted_classes for p in document.contract.propositions):
        suite.append(Perturbation("contradict_first"))
    entity = _entity_of(document)
    others = sorted(e for e in document.directory.entities if e != entity)
    suite.append(
        Perturbation(
            "swap_entity", {"entity": others[0] if others else _fresh("OTHER-ENTITY", {entity})}
        )
    )
    by_id = {c.id: c for c in document.candidates}
    suite += [
        Perturbation("supersede", {"candidate_id": item.id})
        for item in sorted(base.packet, key=lambda i: i.id)
        if item.role is OrderRole.EVIDENCE and _speaks_to(document, by_id[item.id])
    ]
    if base.valid_until is not None:
        suite.append(Perturbation("replay_expiry", {"valid_until": base.valid_until.isoformat()}))
    return suite


# --------------------------------------------------------------------------- flips


def slot_states(output: CompileOutput, document: CompileInput | None = None) -> dict[str, str]:
    """Each proposition's visible state; every slot reads `refused` when the compile was (a
    refused output has no slots: without the `document` naming them the result is empty)."""
    if output.result is not Result.COMPILED:
        if document is None:
            return {}
        return {p.key: REFUSED for p in document.contract.propositions}
    return {s.proposition: str(s.state) for s in output.slots}


def admitted_in(output: CompileOutput) -> set[str]:
    return {
        entry["id"]
        for entry in output.trace
        if entry["pass"] == Pass.ADMIT and entry["outcome"] == "admitted" and entry["id"]
    }


def flips(
    base: CompileOutput, variant: CompileOutput, document: CompileInput | None = None
) -> dict[str, Any]:
    """Slots whose state differs between two compilations, and how the admitted set moved.

    The outputs name their own slots; `document` (the base input) is needed only to name the
    slots when both compiles were refused. A refused side reads `refused` for every slot.
    """
    before, after = slot_states(base, document), slot_states(variant, document)
    keys = list(dict.fromkeys([*before, *after]))

    def state(states: dict[str, str], output: CompileOutput, key: str) -> str | None:
        return states.get(key, REFUSED if output.result is not Result.COMPILED else None)

    base_reasons = {s.proposition: str(s.reason) for s in base.slots}
    variant_reasons = {s.proposition: str(s.reason) for s in variant.slots}
    flipped = [
        {
            "proposition": key,
            "base": state(before, base, key),
            "variant": state(after, variant, key),
            "base_reason": base_reasons.get(key),
            "variant_reason": variant_reasons.get(key),
        }
        for key in keys
        if state(before, base, key) != state(after, variant, key)
    ]
    admitted_before, admitted_after = admitted_in(base), admitted_in(variant)
    return {
        "slots": flipped,
        "admitted_added": sorted(admitted_after - admitted_before),
        "admitted_removed": sorted(admitted_before - admitted_after),
        "packet_added": sorted(set(variant.packet_ids) - set(base.packet_ids)),
        "packet_removed": sorted(set(base.packet_ids) - set(variant.packet_ids)),
        "tokens": {"base": base.tokens_used, "variant": variant.tokens_used},
        "result": {"base": str(base.result), "variant": str(variant.result)},
        "refusal": variant.refusal.model_dump(by_alias=True) if variant.refusal else None,
    }


def sweep(
    document: CompileInput,
    perturbations: Sequence[Perturbation] | None = None,
    weak_classes: Iterable[str] = (),
    compile_fn: Callable[[CompileInput], CompileOutput] | None = None,
    *,
    expectations: Iterable[Any] = (),
    tiers: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Compile the base and every perturbation; report each variant's slots, flips and
    verdicts (`relations.judge`), the variant expectations that fail
    (`relations.VariantExpectation`; a perturbation one names that the suite lacks is run
    too), and the corpus-derived findings (`tiers`: class → authority tier, for their text).
    `passed` is false on any violation or failed expectation."""
    from .pipeline import compile_input
    from .relations import (
        SEVERITY,
        Context,
        corpus_findings,
        expectation_failures,
        judge,
        label,
        missing_perturbations,
        worst,
    )

    run = compile_fn or compile_input
    weak = tuple(dict.fromkeys(weak_classes))
    expectations = list(expectations)
    base = run(document)
    suite = (
        list(perturbations)
        if perturbations is not None
        else standard_suite(document, weak, base=base)
    )
    suite += missing_perturbations(suite, expectations)
    rows = []
    for perturbation in suite:
        variant_input = perturbation.apply(document)
        variant = run(variant_input)
        verdicts = judge(base, variant, perturbation, Context(document, variant_input, weak))
        rows.append(
            {
                **perturbation.to_json(),
                "label": label(perturbation, document),
                "result": str(variant.result),
                "slots": slot_states(variant, variant_input),
                "flips": flips(base, variant, document),
                "verdict": worst(verdicts),
                "verdicts": [v.to_json() for v in verdicts],
            }
        )
    failures = expectation_failures(rows, expectations)
    counts = dict.fromkeys(SEVERITY, 0)
    for row in rows:
        for v in row["verdicts"]:
            counts[v["kind"]] += 1
    return {
        "base": {
            "result": str(base.result),
            "plan_id": base.plan_id,
            "slots": slot_states(base, document),
            "refusal": base.refusal.model_dump(by_alias=True) if base.refusal else None,
        },
        "perturbations": rows,
        "expectation_failures": failures,
        "corpus_findings": [
            f.to_json() for f in corpus_findings(document.contract, document.candidates, tiers)
        ],
        "passed": counts["violation"] == 0 and not failures,
        "totals": {
            "perturbations": len(rows),
            "with_flips": sum(1 for r in rows if r["flips"]["slots"]),
            "flipped_slots": sum(len(r["flips"]["slots"]) for r in rows),
            "violations": counts["violation"],
            "findings": counts["finding"],
            "expected": counts["expected"],
            "expectation_failures": len(failures),
        },
    }


# --------------------------------------------------------------------------- helpers


def _show(key: str, value: Any) -> str:
    if key == "days":
        return f"{value:+d}"
    if isinstance(value, list | tuple):
        return "+".join(map(str, value))
    return str(value)


def _with_request(document: CompileInput, **changes: Any) -> CompileInput:
    return document.model_copy(update={"request": document.request.model_copy(update=changes)})


def _with_candidate(document: CompileInput, candidate_id: str, **changes: Any) -> CompileInput:
    _require(document, candidate_id)
    return document.model_copy(
        update={
            "candidates": tuple(
                c.model_copy(update=changes) if c.id == candidate_id else c
                for c in document.candidates
            )
        }
    )


def _require(document: CompileInput, candidate_id: str) -> None:
    if not any(c.id == candidate_id for c in document.candidates):
        raise ValueError(f"no candidate '{candidate_id}'")


def _entity_of(document: CompileInput) -> str:
    try:
        return resolve_entity(document.request.entity, document.directory.entities)
    except Refused:
        return document.request.entity


def _admissible_item(document: CompileInput, item_id: str, **fields: Any) -> Candidate:
    """An evidence item that passes authorisation and applicability for this request (the
    caller's effective roles and purpose, the resolved entity, in force since the day before
    the decision), so that only its class decides whether it is admitted."""
    request = document.request
    roles = sorted(expand_roles(request.roles, document.directory.role_parents))
    if request.delegation is not None:
        roles = sorted(set(roles) & set(request.delegation.scopes)) or roles
    return Candidate.model_validate(
        {
            "id": item_id,
            "entity": _entity_of(document),
            "allowed_roles": roles,
            "allowed_purposes": [request.purpose],
            "valid_from": request.decision_date - dt.timedelta(days=1),
            **fields,
        }
    )


def _fresh(stem: str, taken: set[str]) -> str:
    name, n = stem, 1
    while name in taken:
        n += 1
        name = f"{stem}-{n}"
    taken.add(name)
    return name


def _speaks_to(document: CompileInput, c: Candidate) -> bool:
    keys = {p.key for p in document.contract.propositions}
    return c.role is OrderRole.EVIDENCE and bool(keys.intersection((*c.supports, *c.contradicts)))


def _substitute_classes(document: CompileInput, weak_classes: Iterable[str]) -> list[str]:
    """Classes to substitute, weakest first: the known weak ones, then any the corpus carries."""
    preferred = list(dict.fromkeys(weak_classes))
    corpus = sorted({c.evidence_class for c in document.candidates})
    return preferred + [c for c in corpus if c not in preferred]


__all__ = [
    "OPERATORS",
    "Perturbation",
    "Requirement",
    "boundary_suite",
    "contaminate",
    "contradict",
    "contradict_first",
    "flips",
    "look_alike",
    "promote_weak",
    "replay_expiry",
    "swap_entity",
    "hide",
    "revoke_delegation",
    "shift_days",
    "standard_suite",
    "substitute_class",
    "supersede",
    "swap_principal",
    "sweep",
]
