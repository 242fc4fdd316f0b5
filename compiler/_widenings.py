"""Contract widenings: every way a contract admits more, or demands less, than a baseline.

    from compiler._widenings import contract_widenings
    for w in contract_widenings(published, draft):
        print(w.id, w.detail)

A widening is a change a reviewer must see before a contract is published, because it lets
through what the baseline kept out or lets a decision go ahead on less:

| kind | when |
| --- | --- |
| `class_added` | a proposition of both contracts accepts a class it did not |
| `requirement_dropped` | a required proposition becomes optional, or a proposition is removed |
| `purpose_added` | the contract may be used for a purpose it could not |
| `precedence_changed` | an accepted class now comes before a class it came after |
| `min_relevance_lowered` | the policy's floor on optional items' relevance is lower |
| `max_items_raised` | a proposition may carry more supporting items |

Each rule is one function of this module's `RULES` (kept as data, in the order above); each
gives its widenings in the contracts' own order, so the list is deterministic. A widening's
`id` is built from its kind and what it names (never from its wording), so the same change
against the same baseline has the same id in the CLI, the impact report and a signed
approval statement. Pure: no clock, no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Literal

from compiler._input import Contract, Frozen, Proposition

WideningKind = Literal[
    "class_added",
    "requirement_dropped",
    "purpose_added",
    "precedence_changed",
    "min_relevance_lowered",
    "max_items_raised",
]


class Widening(Frozen):
    """One widening of a contract against its baseline."""

    kind: WideningKind
    proposition: str | None  # None for a change of the contract as a whole
    detail: str  # in plain words, naming what changed and how it was
    id: str  # stable: the kind and what it names, e.g. "class_added:waiver_valid:scan"

    def to_json(self) -> dict[str, str | None]:
        return self.model_dump(mode="json")


def _widening(kind: WideningKind, proposition: str | None, detail: str, *names: str) -> Widening:
    return Widening(kind=kind, proposition=proposition, detail=detail, id=":".join((kind, *names)))


def _quoted(names: Sequence[str]) -> str:
    shown = [f"'{n}'" for n in names]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


def _common(old: Contract, new: Contract) -> Iterator[tuple[Proposition, Proposition]]:
    """The propositions both contracts have, as (old, new), in the new contract's order."""
    for proposition in new.propositions:
        before = old.proposition(proposition.key)
        if before is not None:
            yield before, proposition


def _classes_added(old: Contract, new: Contract) -> Iterator[Widening]:
    for before, after in _common(old, new):
        for cls in after.accepted_classes:
            if cls not in before.accepted_classes:
                rank = after.accepted_classes.index(cls) + 1
                yield _widening(
                    "class_added",
                    after.key,
                    f"'{after.key}' may now be established by '{cls}', which the baseline did "
                    f"not accept for it (choice {rank} of {len(after.accepted_classes)}).",
                    after.key,
                    cls,
                )


def _requirements_dropped(old: Contract, new: Contract) -> Iterator[Widening]:
    for before in old.propositions:
        after = new.proposition(before.key)
        if after is None:
            consequence = (
                "a gap in it no longer blocks the decision"
                if before.required
                else "packets no longer carry a slot for it"
            )
            yield _widening(
                "requirement_dropped",
                before.key,
                f"'{before.key}' is removed from the contract: {consequence}.",
                before.key,
            )
        elif before.required and not after.required:
            yield _widening(
                "requirement_dropped",
                before.key,
                f"'{before.key}' becomes optional: a gap in it no longer blocks the decision "
                "(the baseline required it).",
                before.key,
            )


def _purposes_added(old: Contract, new: Contract) -> Iterator[Widening]:
    for purpose in new.purposes:
        if purpose not in old.purposes:
            yield _widening(
                "purpose_added",
                None,
                f"The contract may now be used for the purpose '{purpose}', which the baseline "
                "refused.",
                purpose,
            )


def _precedence_changed(old: Contract, new: Contract) -> Iterator[Widening]:
    """One widening per class that now comes before at least one class it came after (among
    the classes both contracts accept for the proposition)."""
    for before, after in _common(old, new):
        kept_before = [c for c in before.accepted_classes if c in after.accepted_classes]
        kept_after = [c for c in after.accepted_classes if c in before.accepted_classes]
        for position, cls in enumerate(kept_after):
            overtaken = [
                other
                for other in kept_after[position + 1 :]
                if kept_before.index(other) < kept_before.index(cls)
            ]
            if overtaken:
                yield _widening(
                    "precedence_changed",
                    after.key,
                    f"'{after.key}' now prefers '{cls}' to {_quoted(overtaken)}, which the "
                    f"baseline preferred to it: when both are available, '{cls}' fills the slot.",
                    after.key,
                    cls,
                )


def _min_relevance_lowered(old: Contract, new: Contract) -> Iterator[Widening]:
    was, now = old.policy.min_relevance, new.policy.min_relevance
    if now < was:
        yield _widening(
            "min_relevance_lowered",
            None,
            f"Optional items now need a relevance of only {now:g} to enter the packet "
            f"(the baseline needed {was:g}).",
        )


def _max_items_raised(old: Contract, new: Contract) -> Iterator[Widening]:
    for before, after in _common(old, new):
        if after.max_items > before.max_items:
            yield _widening(
                "max_items_raised",
                after.key,
                f"'{after.key}' may now carry up to {after.max_items} supporting items "
                f"(the baseline allowed {before.max_items}).",
                after.key,
            )


Rule = Callable[[Contract, Contract], Iterator[Widening]]

RULES: dict[WideningKind, Rule] = {
    "class_added": _classes_added,
    "requirement_dropped": _requirements_dropped,
    "purpose_added": _purposes_added,
    "precedence_changed": _precedence_changed,
    "min_relevance_lowered": _min_relevance_lowered,
    "max_items_raised": _max_items_raised,
}
WIDENING_KINDS: tuple[WideningKind, ...] = tuple(RULES)


def contract_widenings(old: Contract, new: Contract) -> list[Widening]:
    """Every widening of `new` against the baseline `old`: by kind (in `WIDENING_KINDS`
    order), then in the contracts' order. Empty when `new` admits and demands exactly what
    `old` does, or less."""
    return [widening for rule in RULES.values() for widening in rule(old, new)]


__all__ = ["RULES", "WIDENING_KINDS", "Widening", "WideningKind", "contract_widenings"]
