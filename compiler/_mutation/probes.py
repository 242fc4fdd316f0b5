"""Inputs aimed at one mistake: a scenario's base changed just enough that the contract and
the mutant should answer differently (an item of the added class, one item of each class,
a request for the widened purpose, ...). Tried when the scenarios themselves never tell the
two apart, so that an equivalent or surviving mutant can still come with a proposal.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from compiler._input import Candidate, CompileInput, Contract, Proposition
from compiler._mutation.kinds import MAX_ITEMS_STEP, Mutant
from compiler._perturb.operators import contradict, substitute_class

Probe = tuple[str, CompileInput]  # a plain label, the input


def _spec(contract: Contract, key: str | None) -> Proposition | None:
    return contract.proposition(key) if key is not None else None


def _specs(mutant: Mutant, document: CompileInput) -> tuple[Proposition | None, Proposition | None]:
    """The mutated proposition as the contract has it, and as the mutant does."""
    return (_spec(document.contract, mutant.proposition),
            _spec(mutant.contract, mutant.proposition))  # fmt: skip


def _item(document: CompileInput, key: str, cls: str, stem: str, relevance: float = 1.0,
          supports: bool = True) -> Candidate:  # fmt: skip
    """An item admissible for this request, of class `cls`, claiming `key` (built by
    `contradict`, which makes such an item, then turned into a supporter if asked)."""
    added = contradict(document, key, cls).candidates[-1]
    taken = {c.id for c in document.candidates}
    item_id, n = stem, 1
    while item_id in taken:
        n += 1
        item_id = f"{stem}-{n}"
    changes = {"id": item_id, "relevance": relevance}
    if supports:
        changes |= {"supports": (key,), "contradicts": (),
                    "content": f"Record establishing {key} ({cls})."}  # fmt: skip
    return added.model_copy(update=changes)


def _with(document: CompileInput, *items: Candidate) -> CompileInput:
    return document.model_copy(update={"candidates": (*document.candidates, *items)})


def _added_class(mutant: Mutant, document: CompileInput) -> Iterator[Probe]:
    before, after = _specs(mutant, document)
    if before is None or after is None:
        return
    for cls in (c for c in after.accepted_classes if c not in before.accepted_classes):
        for c in document.candidates:
            if before.key in c.supports and c.evidence_class in before.accepted_classes:
                yield (f"{c.id} recorded as {cls}", substitute_class(document, c.id, cls))
        yield (f"an item of {cls} claiming {before.key}",
               _with(document, _item(document, before.key, cls, f"{cls}-claim")))  # fmt: skip


def _each_class(mutant: Mutant, document: CompileInput) -> Iterator[Probe]:
    spec = _spec(document.contract, mutant.proposition)
    if spec is None:
        return
    items = [_item(document, spec.key, cls, f"{cls}-record") for cls in spec.accepted_classes]
    yield (f"one item of each class {spec.key} accepts", _with(document, *items))


def _dropped(mutant: Mutant, document: CompileInput) -> Iterator[tuple[str, str]]:
    """Each (proposition, class) the contract accepts and the mutant no longer does."""
    before, after = _specs(mutant, document)
    if before is not None and after is not None:
        for cls in before.accepted_classes:
            if cls not in after.accepted_classes:
                yield before.key, cls


def _contradicted_by_dropped(mutant: Mutant, document: CompileInput) -> Iterator[Probe]:
    for key, cls in _dropped(mutant, document):
        yield (f"an item of {cls} contradicting {key}", contradict(document, key, cls))


def _supported_by_dropped(mutant: Mutant, document: CompileInput) -> Iterator[Probe]:
    for key, cls in _dropped(mutant, document):
        item = _item(document, key, cls, f"{cls}-record")
        yield (f"an item of {cls} supporting {key}", _with(document, item))


def _contradicted(mutant: Mutant, document: CompileInput) -> Iterator[Probe]:
    spec = _spec(document.contract, mutant.proposition)
    if spec is not None and spec.accepted_classes:
        yield (f"{spec.key} contradicted", contradict(document, spec.key))


def _purpose(mutant: Mutant, document: CompileInput) -> Iterator[Probe]:
    for purpose in (p for p in mutant.contract.purposes if p not in document.contract.purposes):
        request = document.request.model_copy(update={"purpose": purpose})
        yield (f"asked for {purpose}", document.model_copy(update={"request": request}))


def _more_items(mutant: Mutant, document: CompileInput) -> Iterator[Probe]:
    spec = _spec(document.contract, mutant.proposition)
    if spec is None or not spec.accepted_classes:
        return
    cls = spec.accepted_classes[0]
    count = spec.max_items + MAX_ITEMS_STEP
    items: list[Candidate] = []
    for _ in range(count):
        items.append(_item(_with(document, *items), spec.key, cls, f"{cls}-record", 0.9))
    yield (f"{count} items of {cls} supporting {spec.key}", _with(document, *items))


def _below_floor(mutant: Mutant, document: CompileInput) -> Iterator[Probe]:
    """A corroborating item between the two floors (the floor applies to corroboration only,
    so only a proposition that may rest on several items shows it in its resource ids)."""
    floor = document.contract.policy.min_relevance
    lowered = mutant.contract.policy.min_relevance
    for spec in document.contract.propositions:
        if spec.accepted_classes and spec.max_items >= 2:
            cls = spec.accepted_classes[0]
            relevance = round((floor + lowered) / 2, 6)
            others = tuple(c for c in document.candidates if spec.key not in c.supports)
            alone = document.model_copy(update={"candidates": others})
            strong = _item(alone, spec.key, cls, f"{cls}-record")
            weak = _item(_with(alone, strong), spec.key, cls, f"{cls}-low", relevance)
            yield (f"one item of {cls} supporting {spec.key} and one of relevance "
                   f"{relevance:g} corroborating it", _with(alone, strong, weak))  # fmt: skip
            return


# The inputs that tell each kind apart from the contract; a kind absent here changes every
# scenario's own output (a dropped or mistyped proposition).
PROBES: dict[str, Callable[[Mutant, CompileInput], Iterator[Probe]]] = {
    "weak_class_added": _added_class,
    "unknown_class_added": _added_class,
    "lower_tier_class_added": _added_class,
    "required_dropped": _contradicted,
    "precedence_reversed": _each_class,
    "contradicting_class_dropped": _contradicted_by_dropped,
    "first_class_dropped": _supported_by_dropped,
    "purpose_widened": _purpose,
    "max_items_raised": _more_items,
    "min_relevance_lowered": _below_floor,
}


def probes(mutant: Mutant, document: CompileInput) -> list[Probe]:
    """The inputs aimed at `mutant`, built from one scenario's base (`document`, under the
    original contract)."""
    make = PROBES.get(mutant.kind)
    return list(make(mutant, document)) if make is not None else []
