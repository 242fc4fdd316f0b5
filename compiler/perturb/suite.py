"""The suites derived from one scenario: `standard_suite`, which the workbench runs for every
scenario, and `boundary_suite`.
"""

from __future__ import annotations

from collections.abc import Iterable

from compiler.codes import OrderRole
from compiler.compare import admitted_ids
from compiler.models import CompileInput, CompileOutput
from compiler.resolve import expand_roles

from .arguments import Perturbation
from .operators import _entity_of, _fresh, _speaks_to, _substitute_classes

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
    from compiler.pipeline import compile_input

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
