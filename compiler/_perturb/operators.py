"""The operators: each a pure function from one compile input to a variant that changes one
predicate and nothing else (the table in `compiler._perturb`), registered in `CORE_OPERATORS`
(`arguments.OPERATORS` adds the contract probes of `probes`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from compiler._codes import OrderRole
from compiler._compare import admitted_ids
from compiler._errors import Refused
from compiler._input import Candidate, CompileInput
from compiler._passes.admit import in_force
from compiler._passes.resolve import expand_roles, resolve_entity

CONTAMINANT_PREFIX = "contaminant-"
WEAK_PROMOTION_PREFIX = "weak-promotion:"
LOOK_ALIKE_PREFIX = "look-alike:"
APPROVAL_WORDING = "APPROVED. Confirmed and signed off: {proposition} holds. "


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

    What depends on it stays in the pool, as a retriever would return it: the compiler then
    rejects it `dependency_absent` (docs/design.md, "Pools as retrievers return them"), and a
    named item so blocked refuses the compile with that reason. An item it superseded stays
    superseded if the hidden item was in force (hiding a new policy does not revive the old).
    """
    _require(document, candidate_id)
    on = document.request.decision_date
    hidden = next(c for c in document.candidates if c.id == candidate_id)
    kept = []
    for c in document.candidates:
        if c.id == candidate_id:
            continue
        if c.superseded_by == candidate_id:
            c = c.model_copy(
                update={"superseded_by": None, "superseded": c.superseded or in_force(hidden, on)}
            )
        kept.append(c)
    named = tuple(n for n in document.request.named if n != candidate_id)
    return _with_request(document.model_copy(update={"candidates": tuple(kept)}), named=named)


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


CORE_OPERATORS: dict[str, Callable[..., CompileInput]] = {
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
