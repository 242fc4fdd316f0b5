"""The contract probes: operators that ask what the contract itself says, where the other
operators ask what the corpus and the request do. Each adds admissible items (or changes the
purpose) so that only the contract decides the outcome, and `compiler._relations` judges the
outcome against the contract and, when the caller has one, the catalogue's authority tiers.

| operator            | what it does                                                       |
| ------------------- | ------------------------------------------------------------------ |
| precedence          | one supporter of each accepted class, the later classes more       |
|                     | relevant: the first class must still win the slot                 |
| swap_purpose        | the same request under another purpose                             |
| promote_classes     | per proposition, an item of each listed class it does not accept,  |
|                     | or accepts below its first class's authority, claiming approval    |
| contradict_classes  | per proposition, a contradiction of one named class                |
| remove_support      | every item that supports a proposition removed                     |
| crowd               | per proposition, duplicates of its best supporter and low-relevance |
|                     | copies; and low-relevance context                                  |

Ids of added items say what they are: `precedence:<class>:<proposition>`,
`promotion:<class>:<proposition>`, `contradiction:<class>:<proposition>`,
`crowd:duplicate-<n>:<id>`, `crowd:low:<proposition>`, `crowd:context-<relevance>`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from compiler._codes import OrderRole, Requirement
from compiler._compare import admitted_ids
from compiler._input import CompileInput
from compiler._perturb.operators import (
    APPROVAL_WORDING,
    _admissible_item,
    _fresh,
    _with_request,
    hide,
)

PROBE_OPERATORS = frozenset(
    {
        "precedence",
        "swap_purpose",
        "promote_classes",
        "contradict_classes",
        "remove_support",
        "crowd",
    }
)
"""The contract probes' operators: their items are made up to question the contract, so what
they show is not what the scenarios exercise (a run's coverage leaves them out)."""

PRECEDENCE_PREFIX = "precedence:"
PROMOTION_PREFIX = "promotion:"
CONTRADICTION_PREFIX = "contradiction:"
CROWD_PREFIX = "crowd:"
LOW_RELEVANCE = 0.05
"""The relevance of the crowd's low copies: an item this far from the question entering the
packet says the contract's `min_relevance` lets anything in."""
CONTEXT_LEVELS = (0.05, 0.15, 0.25, 0.35, 0.45)
"""The relevance of the crowd's context items, one at each level: the lowest that enters the
packet is where the contract's `min_relevance` stands."""
DUPLICATES = 4
"""How many copies of a proposition's best supporter the crowd adds."""


def precedence(document: CompileInput) -> CompileInput:
    """For every proposition with two or more accepted classes, one admissible supporter of
    each, relevance rising as precedence falls: relevance would pick the last class, the
    contract's precedence must pick the first."""
    taken = {c.id for c in document.candidates}
    added = []
    for p in document.contract.propositions:
        if len(p.accepted_classes) < 2:
            continue
        for rank, cls in enumerate(p.accepted_classes):
            added.append(
                _admissible_item(
                    document,
                    _fresh(f"{PRECEDENCE_PREFIX}{cls}:{p.key}", taken),
                    evidence_class=cls,
                    supports=[p.key],
                    tokens=20,
                    relevance=round(0.5 + 0.4 * rank / (len(p.accepted_classes) - 1), 3),
                    content=f"A {cls} establishing {p.key}.",
                )
            )
    return document.model_copy(update={"candidates": (*document.candidates, *added)})


def swap_purpose(document: CompileInput, purpose: str) -> CompileInput:
    return _with_request(document, purpose=purpose)


def promote_classes(document: CompileInput, classes: Sequence[str]) -> CompileInput:
    """For every proposition, an item of each of `classes` claiming it with top relevance and
    approval wording, admissible in every other respect: only the proposition's accepted
    classes decide whether it is admitted."""
    taken = {c.id for c in document.candidates}
    added = [
        _admissible_item(
            document,
            _fresh(f"{PROMOTION_PREFIX}{cls}:{p.key}", taken),
            evidence_class=cls,
            supports=[p.key],
            relevance=1.0,
            tokens=30,
            content=APPROVAL_WORDING.format(proposition=p.key),
        )
        for p in document.contract.propositions
        for cls in dict.fromkeys(classes)
    ]
    return document.model_copy(update={"candidates": (*document.candidates, *added)})


def contradict_classes(document: CompileInput, classes: Mapping[str, str]) -> CompileInput:
    """For each proposition named in `classes`, an admissible item of the class named for it
    that contradicts it (`contradict_first` is the case of every first accepted class)."""
    taken = {c.id for c in document.candidates}
    keys = {p.key for p in document.contract.propositions}
    unknown = sorted(set(classes) - keys)
    if unknown:
        raise ValueError(f"the contract has no proposition '{unknown[0]}'")
    added = [
        _admissible_item(
            document,
            _fresh(f"{CONTRADICTION_PREFIX}{cls}:{key}", taken),
            evidence_class=cls,
            supports=[],
            contradicts=[key],
            tokens=40,
            relevance=0.5,
            content=f"A {cls} contradicting {key}.",
        )
        for key, cls in classes.items()
    ]
    return document.model_copy(update={"candidates": (*document.candidates, *added)})


def remove_support(document: CompileInput) -> CompileInput:
    """Every evidence item that supports a proposition of the contract removed, as `hide`
    removes one (what depends on them stays, rejected `dependency_absent`): what the decision
    is without any support."""
    keys = {p.key for p in document.contract.propositions}
    for c in sorted(document.candidates, key=lambda c: c.id):
        present = any(d.id == c.id for d in document.candidates)
        if present and c.role is OrderRole.EVIDENCE and keys.intersection(c.supports):
            document = hide(document, c.id)
    return document


def crowd(document: CompileInput) -> CompileInput:
    """What crowds a packet: for each proposition, four duplicates of its most relevant
    admissible supporter (the same record indexed again under other ids) and a low-relevance
    supporter of its first accepted class, where it has a supporter to corroborate; and one
    low-relevance context item at each of `CONTEXT_LEVELS`. A contract whose
    `max_items` or `min_relevance` lets them in fills the packet with repetition and noise."""
    taken = {c.id for c in document.candidates}
    added = []
    universe = admitted_ids(document)
    by_relevance = sorted(
        (c for c in document.candidates if c.id in universe), key=lambda c: (-c.relevance, c.id)
    )
    for p in document.contract.propositions:
        if not p.accepted_classes:
            continue
        best = next(
            (
                c
                for c in by_relevance
                if p.key in c.supports
                and c.role is OrderRole.EVIDENCE
                and c.evidence_class in p.accepted_classes
            ),
            None,
        )
        if best is None:
            continue  # nothing to corroborate: a low copy would be the only support
        added += [
            best.model_copy(
                update={
                    "id": _fresh(f"{CROWD_PREFIX}duplicate-{n}:{best.id}", taken),
                    "superseded_by": None,
                    "depends_on": (),
                    "group": None,
                    "group_required": False,
                    "requirement": Requirement.PREFERRED,
                }
            )
            for n in range(1, DUPLICATES + 1)
        ]
        added.append(
            _admissible_item(
                document,
                _fresh(f"{CROWD_PREFIX}low:{p.key}", taken),
                evidence_class=p.accepted_classes[0],
                supports=[p.key],
                tokens=10,
                relevance=LOW_RELEVANCE,
                content=f"A passing mention of {p.key}.",
            )
        )
    added += [
        _admissible_item(
            document,
            _fresh(f"{CROWD_PREFIX}context-{level}", taken),
            evidence_class="context",
            supports=[],
            role=OrderRole.SUPPORT,
            requirement=Requirement.DISCRETIONARY,
            tokens=10,
            relevance=level,
            content=f"Background of relevance {level} to the question.",
        )
        for level in CONTEXT_LEVELS
    ]
    return document.model_copy(update={"candidates": (*document.candidates, *added)})
