"""The suites derived from one scenario: `standard_suite`, which the workbench runs for every
scenario, and `boundary_suite`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from compiler._codes import OrderRole
from compiler._compare import admitted_ids
from compiler._input import CompileInput
from compiler._output import CompileOutput
from compiler._passes.resolve import expand_roles
from compiler._perturb.arguments import Perturbation
from compiler._perturb.operators import _entity_of, _fresh, _speaks_to, _substitute_classes

OUTSIDER_PRINCIPAL = "outsider"
CONTAMINATION_SIZE = 50


def standard_suite(
    document: CompileInput,
    weak_classes: Iterable[str] = (),
    base: CompileOutput | None = None,
    catalogue: Mapping[str, int] | None = None,
) -> list[Perturbation]:
    """The perturbations every scenario is run against.

    ±1 day; every admitted evidence item hidden in turn; each admitted evidence item's class
    replaced by one its propositions do not accept (a weak class when one is known); the
    principal swapped for one with no shared role; the delegation revoked, when there is one;
    and 50 contaminating items. Then the failure boundary's tests: the weak classes promoted
    (when any is known), look-alike inapplicable copies, a contradiction of each proposition's
    first accepted class, another entity, each evidence item of the base packet superseded in
    turn, and the decision replayed the day after the plan expires (when it does). Last the
    contract probes (`contract_probes`). `base` is the base's compile output, compiled here when
    not given (only its packet and `valid_until` are read); `catalogue` maps the catalogue's
    classes to their authority tiers.
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
    suite += boundary_suite(document, weak_classes, base)
    return suite + contract_probes(document, weak_classes, catalogue)


def contract_probes(
    document: CompileInput,
    weak_classes: Iterable[str] = (),
    catalogue: Mapping[str, int] | None = None,
) -> list[Perturbation]:
    """The probes of the contract itself (`compiler._perturb.probes`): precedence where a
    proposition accepts two classes or more; each other permitted purpose and one that is not
    permitted; every class of the catalogue and the corpus but the weak ones (`promote_weak`
    tries those) claiming each proposition; a contradiction by each accepted class after the
    first (`contradict_first` tries the first) and by each class the corpus contradicts a
    proposition with that the contract does not accept; all support removed; and the crowd."""
    contract = document.contract
    propositions = contract.propositions
    if not propositions:
        return []
    weak = set(weak_classes)
    suite = []
    if any(len(p.accepted_classes) > 1 for p in propositions):
        suite.append(Perturbation("precedence"))
    purpose = document.request.purpose
    suite += [
        Perturbation("swap_purpose", {"purpose": q}) for q in contract.purposes if q != purpose
    ]
    unpermitted = _fresh("unpermitted_purpose", {*contract.purposes, purpose})
    suite.append(Perturbation("swap_purpose", {"purpose": unpermitted}))
    corpus_classes = {c.evidence_class for c in document.candidates}
    classes = sorted((set(catalogue or {}) | corpus_classes) - weak)
    if classes:
        suite.append(Perturbation("promote_classes", {"classes": classes}))
    for rank in range(1, max(len(p.accepted_classes) for p in propositions)):
        ranked = {
            p.key: p.accepted_classes[rank] for p in propositions if len(p.accepted_classes) > rank
        }
        suite.append(Perturbation("contradict_classes", {"classes": ranked}))
    unaccepted: dict[str, list[str]] = {}
    for p in propositions:
        unaccepted[p.key] = sorted(
            {c.evidence_class for c in document.candidates if p.key in c.contradicts}
            - set(p.accepted_classes)
        )
    for index in range(max(len(v) for v in unaccepted.values())):
        chosen = {key: v[index] for key, v in unaccepted.items() if len(v) > index}
        suite.append(Perturbation("contradict_classes", {"classes": chosen}))
    keys = {p.key for p in propositions}
    if any(keys.intersection(c.supports) for c in document.candidates):
        suite.append(Perturbation("remove_support"))
    suite.append(Perturbation("crowd"))
    return suite


def boundary_suite(
    document: CompileInput, weak_classes: Iterable[str] = (), base: CompileOutput | None = None
) -> list[Perturbation]:
    """The perturbations of the seed's failure boundary (`standard_suite` ends with them)."""
    from compiler._pipeline import compile_input

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
