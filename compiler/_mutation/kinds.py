"""The mistakes owners make, as data: `MUTATION_KINDS`, the `Mutant` each applies to a contract,
and `mutants`, every mutant of one contract in a stable order.

Each kind is one entry of `KINDS`: the function that applies it to the contract (one mutant
per proposition, or per proposition and class, where it applies) and the plain words a
surviving mutant of it is explained with (`advice`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict

from compiler._input import Candidate, Contract, Proposition

# A class outside every catalogue, of the kind owners accept by mistake: a machine-written
# summary standing in for a signed record.
UNKNOWN_CLASS = "machine_summary"
# Purposes next to most decisions' own, which an owner widens a contract to "while at it".
ADJACENT_PURPOSES = ("analytics", "research")
MAX_ITEMS_STEP = 2
MIN_RELEVANCE_STEP = 0.2


class Mutant(BaseModel):
    """One mistake applied to the contract: `contract` is the contract with it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str  # stable: "kind:proposition" (":class" where a proposition has several)
    kind: str
    proposition: str | None
    description: str
    contract: Contract

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "kind": self.kind, "proposition": self.proposition,
                "description": self.description}  # fmt: skip


@dataclass(frozen=True)
class Catalogue:
    """What the kinds read besides the contract."""

    tiers: Mapping[str, int]  # class key -> authority tier, 1 best
    weak_classes: tuple[str, ...]
    corpus: tuple[Candidate, ...]

    def contradicting(self, key: str) -> set[str]:
        return {c.evidence_class for c in self.corpus if key in c.contradicts}

    def claiming(self, key: str) -> set[str]:
        return {c.evidence_class for c in self.corpus if key in (*c.supports, *c.contradicts)}


Change = tuple[str, str | None, str, Contract]  # key suffix, proposition, description, contract
Maker = Callable[[Contract, Catalogue], Iterator[Change]]


def _with_proposition(contract: Contract, which: str, **changes: Any) -> Contract:
    return contract.model_copy(
        update={
            "propositions": tuple(
                p.model_copy(update=changes) if p.key == which else p for p in contract.propositions
            )
        }
    )


def _add_class(contract: Contract, p: Proposition, cls: str) -> Contract:
    return _with_proposition(contract, p.key, accepted_classes=(*p.accepted_classes, cls))


def _without_class(contract: Contract, p: Proposition, cls: str) -> Contract:
    kept = tuple(c for c in p.accepted_classes if c != cls)
    return _with_proposition(contract, p.key, accepted_classes=kept)


def _weak_class_added(contract: Contract, catalogue: Catalogue) -> Iterator[Change]:
    for p in contract.propositions:
        for cls in catalogue.weak_classes:
            if cls not in p.accepted_classes:
                yield (f"{p.key}:{cls}", p.key, f"`{cls}`, a weak class, became accepted for "
                       f"`{p.key}`", _add_class(contract, p, cls))  # fmt: skip


def _unknown_class_added(contract: Contract, catalogue: Catalogue) -> Iterator[Change]:
    for p in contract.propositions:
        taken = {*catalogue.tiers, *p.accepted_classes}
        cls, n = UNKNOWN_CLASS, 1
        while cls in taken:
            n += 1
            cls = f"{UNKNOWN_CLASS}_{n}"
        yield (p.key, p.key, f"`{cls}`, a class outside the catalogue, became "
               f"accepted for `{p.key}`", _add_class(contract, p, cls))  # fmt: skip


def _lower_tier_class_added(contract: Contract, catalogue: Catalogue) -> Iterator[Change]:
    """The worse-tier class an owner would add: one the corpus already uses for the
    proposition if any, else the nearest worse tier (then by key)."""
    weak = set(catalogue.weak_classes)
    for p in contract.propositions:
        tiers = [catalogue.tiers[c] for c in p.accepted_classes if c in catalogue.tiers]
        if not tiers:
            continue
        best = min(tiers)
        claimed = catalogue.claiming(p.key)
        worse = sorted(
            (cls not in claimed, tier, cls)
            for cls, tier in catalogue.tiers.items()
            if tier > best and cls not in weak and cls not in p.accepted_classes
        )
        if worse:
            cls = worse[0][2]
            yield (p.key, p.key, f"`{cls}` (authority tier {catalogue.tiers[cls]}, below the "
                   f"tier {best} `{p.key}` rests on) became accepted for it",
                   _add_class(contract, p, cls))  # fmt: skip


def _required_dropped(contract: Contract, catalogue: Catalogue) -> Iterator[Change]:
    for p in contract.propositions:
        if p.required:
            yield (p.key, p.key, f"`{p.key}` became optional",
                   _with_proposition(contract, p.key, required=False))  # fmt: skip


def _precedence_reversed(contract: Contract, catalogue: Catalogue) -> Iterator[Change]:
    for p in contract.propositions:
        if len(p.accepted_classes) >= 2:
            order = tuple(reversed(p.accepted_classes))
            yield (p.key, p.key, f"the precedence of `{p.key}`'s classes was "
                   f"reversed ({', '.join(order)})",
                   _with_proposition(contract, p.key, accepted_classes=order))  # fmt: skip


def _contradicting_class_dropped(contract: Contract, catalogue: Catalogue) -> Iterator[Change]:
    for p in contract.propositions:
        contradicting = catalogue.contradicting(p.key)
        for cls in p.accepted_classes:
            if cls in contradicting:
                yield (f"{p.key}:{cls}", p.key, f"`{cls}`, which contradicts `{p.key}` in the "
                       f"corpus, stopped being accepted for it",
                       _without_class(contract, p, cls))  # fmt: skip


def _first_class_dropped(contract: Contract, catalogue: Catalogue) -> Iterator[Change]:
    for p in contract.propositions:
        if p.accepted_classes:
            cls = p.accepted_classes[0]
            yield (p.key, p.key, f"`{cls}`, the first class `{p.key}` accepts, was dropped",
                   _without_class(contract, p, cls))  # fmt: skip


def _purpose_widened(contract: Contract, catalogue: Catalogue) -> Iterator[Change]:
    for purpose in ADJACENT_PURPOSES:
        if purpose not in contract.purposes:
            widened = contract.model_copy(update={"purposes": (*contract.purposes, purpose)})
            yield (purpose, None, f"the purpose `{purpose}` became permitted too", widened)


def _proposition_dropped(contract: Contract, catalogue: Catalogue) -> Iterator[Change]:
    for p in contract.propositions:
        kept = tuple(q for q in contract.propositions if q.key != p.key)
        yield (p.key, p.key, f"`{p.key}` was dropped from the contract",
               contract.model_copy(update={"propositions": kept}))  # fmt: skip


def mistyped(key: str, taken: set[str]) -> str | None:
    """`key` with its first two adjacent, different letters after the first swapped (none
    when every such typo is a key in `taken`)."""
    for i in range(1, len(key) - 1):
        a, b = key[i], key[i + 1]
        if a != b and a.isalpha() and b.isalpha():
            typo = key[:i] + b + a + key[i + 2 :]
            if typo not in taken:
                return typo
    return None


def _key_mistyped(contract: Contract, catalogue: Catalogue) -> Iterator[Change]:
    keys = {p.key for p in contract.propositions}
    for p in contract.propositions:
        typo = mistyped(p.key, keys)
        if typo is not None:
            yield (p.key, p.key, f"`{p.key}` was mistyped as `{typo}`",
                   _with_proposition(contract, p.key, key=typo))  # fmt: skip


def _max_items_raised(contract: Contract, catalogue: Catalogue) -> Iterator[Change]:
    for p in contract.propositions:
        raised = p.max_items + MAX_ITEMS_STEP
        yield (p.key, p.key, f"`{p.key}` could rest on {raised} items, not {p.max_items}",
               _with_proposition(contract, p.key, max_items=raised))  # fmt: skip


def _min_relevance_lowered(contract: Contract, catalogue: Catalogue) -> Iterator[Change]:
    floor = contract.policy.min_relevance
    if floor > 0:
        lowered = max(0.0, round(floor - MIN_RELEVANCE_STEP, 6))
        policy = contract.policy.model_copy(update={"min_relevance": lowered})
        yield ("policy", None, f"the policy's `min_relevance` was lowered from {floor:g} to "
               f"{lowered:g}", contract.model_copy(update={"policy": policy}))  # fmt: skip


@dataclass(frozen=True)
class Kind:
    make: Maker
    advice: str  # `{what}` is the mutant's description


# What a scenario must show to notice each kind (`{p}`: the proposition, in backticks).
KINDS: dict[str, Kind] = {
    "weak_class_added": Kind(_weak_class_added, "add a scenario where an item of that class "
                             "claims {p} and no accepted record does, expecting it unknown"),
    "unknown_class_added": Kind(_unknown_class_added, "give the test directory its class "
                                "catalogue (source_classes), so that an accepted class outside "
                                "it is an error, or add a scenario where such an item claims "
                                "{p}"),
    "lower_tier_class_added": Kind(_lower_tier_class_added, "add a scenario where only an "
                                   "item of that class claims {p}, expecting it unknown"),
    "required_dropped": Kind(_required_dropped, "add a scenario where {p} is contradicted, "
                             "expecting decision_ready false and {p} blocking"),
    "precedence_reversed": Kind(_precedence_reversed, "add a scenario with one item of each "
                                "class {p} accepts and pin its resource_ids"),
    "contradicting_class_dropped": Kind(_contradicting_class_dropped, "add a scenario where "
                                        "an item of that class contradicts {p}, expecting it "
                                        "contradicted"),
    "first_class_dropped": Kind(_first_class_dropped, "add a scenario where only an item of "
                                "that class supports {p}, expecting it supported"),
    "purpose_widened": Kind(_purpose_widened, "add a scenario that asks for that purpose, "
                            "expecting every slot refused"),
    "proposition_dropped": Kind(_proposition_dropped, "pin the state of {p} in a scenario"),
    "key_mistyped": Kind(_key_mistyped, "pin the state of {p} in a scenario"),
    "max_items_raised": Kind(_max_items_raised, "add a scenario with more items supporting "
                             "{p} than it may rest on and pin its resource_ids"),
    "min_relevance_lowered": Kind(_min_relevance_lowered, "add a scenario where an item "
                                  "between the two floors corroborates a proposition that may "
                                  "rest on several items, and pin its resource_ids"),
}  # fmt: skip

MUTATION_KINDS: tuple[str, ...] = tuple(KINDS)


def mutants(
    contract: Contract,
    *,
    catalogue: Mapping[str, int] | None = None,
    weak_classes: Sequence[str] = (),
    corpus: Sequence[Candidate] = (),
) -> list[Mutant]:
    """Every kind of `MUTATION_KINDS` applied to `contract` where it applies, in the kinds'
    order, then the contract's propositions' order. `catalogue` maps class key -> authority
    tier; `corpus` is every candidate of the scenarios (for the classes that contradict)."""
    context = Catalogue(dict(catalogue or {}), tuple(dict.fromkeys(weak_classes)), tuple(corpus))
    found = []
    for kind, entry in KINDS.items():
        for suffix, proposition, description, mutated in entry.make(contract, context):
            found.append(Mutant(key=f"{kind}:{suffix}", kind=kind, proposition=proposition,
                                description=description, contract=mutated))  # fmt: skip
    return found


def advice(mutant: Mutant) -> str:
    """What a surviving mutant means, in plain words, and the scenario that would notice it."""
    what = KINDS[mutant.kind].advice.format(p=f"`{mutant.proposition}`")
    return f"if {mutant.description}, no scenario would notice: {what}"
