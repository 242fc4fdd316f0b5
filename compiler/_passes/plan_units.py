"""The plan pass's bookkeeping: what is placed, and the unit an item travels in.

An item enters the packet with its dependencies and its group, or not at all; `Units.unit`
walks that closure and `Units.find_blocked` finds the items of U whose closure leaves U.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from compiler._codes import Outcome, Pass, Reason, RefusalReason
from compiler._errors import Refused
from compiler._passes.admit import Admission
from compiler._trace import Trace

if TYPE_CHECKING:
    from compiler._slotted import AnyCandidate as Candidate
    from compiler._slotted import AnyContract as Contract
    from compiler._slotted import AnyForm as Form
    from compiler._slotted import AnyRequest as Request


class Placement:
    __slots__ = ("candidate", "form", "mandatory", "order")

    def __init__(self, candidate: Candidate, form: Form, mandatory: bool, order: int) -> None:
        self.candidate = candidate
        self.form = form
        self.mandatory = mandatory
        self.order = order


_MARK_STRENGTH = {
    Reason.NOT_NEEDED_FOR_CONTRACT: 0,
    Reason.BELOW_MIN_RELEVANCE: 1,
    Reason.BUDGET_EXCEEDED: 2,
}


class Units:
    """The planner's state, and how items travel together (dependencies and groups)."""

    def __init__(
        self,
        request: Request,
        contract: Contract,
        admission: Admission,
        by_id: Mapping[str, Candidate],
        trace: Trace,
    ) -> None:
        self.request = request
        self.contract = contract
        self.policy = contract.policy
        self.budget = request.token_budget
        self.admission = admission
        self.by_id = by_id
        self.trace = trace
        self.universe = {c.id: c for c in admission.admitted}
        self.placed: dict[str, Placement] = {}
        self.used = 0
        self.marks: dict[str, Reason] = {}
        self.group_members: dict[str, list[str]] = {}
        for c in admission.candidates:
            if c.group is not None:
                self.group_members.setdefault(c.group, []).append(c.id)
        self.cheapest: dict[str, Form] = {}
        self.blocked: set[str] = set()  # in U, but a dependency or group member is not
        # The blocked items that reach an id no candidate carries, with that id.
        self.absent_dependency: dict[str, str] = {}

    # ------------------------------------------------------------------ units

    def form_for(self, candidate: Candidate) -> Form:
        form = self.cheapest.get(candidate.id)
        if form is None:
            form = candidate.allowed_forms()[0]
            self.cheapest[candidate.id] = form
        return form

    def unit(self, head: Candidate) -> list[Candidate]:
        """The head with everything that must travel with it and is not placed yet,
        dependencies first.

        A depth-first walk in post-order, with an explicit stack (a document cannot drive it
        into Python's recursion limit). Placed items are not entered: what is placed is always
        closed under "travels with", so nothing unplaced lies behind them, and leaving them out
        keeps the order of the rest. Each group's member list is scanned once per walk through
        a shared cursor: a scan that resumes skips only members some deeper scan already took.
        """
        placed = self.placed
        if head.id in placed:
            return []
        if not head.depends_on and head.group is None:
            return [head]
        ordered: list[Candidate] = []
        by_id = self.by_id
        seen: set[str] = {head.id}
        cursors: dict[str, int] = {}
        # Each frame: the item, the position in its dependencies, and whether its group is
        # being scanned (the position in the group lives in `cursors`).
        stack: list[list] = [[head, 0]]
        while stack:
            frame = stack[-1]
            item = frame[0]
            deps = item.depends_on
            child: Candidate | None = None
            while frame[1] < len(deps):
                dependency = deps[frame[1]]
                frame[1] += 1
                if dependency not in seen:
                    seen.add(dependency)
                    if dependency not in placed:
                        child = by_id[dependency]
                        break
            if child is None and item.group is not None:
                members = self.group_members[item.group]
                at = cursors.get(item.group, 0)
                while at < len(members):
                    member = members[at]
                    at += 1
                    if member not in seen:
                        seen.add(member)
                        if member not in placed:
                            child = by_id[member]
                            break
                cursors[item.group] = at
            if child is not None:
                stack.append([child, 0])
                continue
            stack.pop()
            ordered.append(item)
        return ordered

    def unit_cost(self, members: Iterable[Candidate]) -> int:
        return sum(self.form_for(m).tokens for m in members if m.id not in self.placed)

    def place(
        self, members: list[Candidate], *, mandatory: bool, why: str, about: str | None
    ) -> list[str]:
        """Place the members not placed yet; return their ids in the order placed."""
        added = []
        for member in members:
            if member.id in self.placed:
                continue
            form = self.form_for(member)
            self.placed[member.id] = Placement(member, form, mandatory, len(self.placed))
            self.used += form.tokens
            self.trace.add(Pass.PLAN, Outcome.SELECTED, member.id, why, about)
            added.append(member.id)
        return added

    def mark(self, candidate: Candidate, reason: Reason) -> None:
        # A budget shortfall explains more than a low score, which explains more than disuse.
        current = self.marks.get(candidate.id)
        if current is None or _MARK_STRENGTH[reason] > _MARK_STRENGTH[current]:
            self.marks[candidate.id] = reason

    def blocked_reason(self, item_id: str) -> Reason:
        if item_id in self.absent_dependency:
            return Reason.DEPENDENCY_ABSENT
        return Reason.DEPENDENCY_MISSING

    def find_blocked(self) -> None:
        """Items of U whose unit reaches an item outside U, by one walk back from those items
        along "travels with" (dependents, and the whole group of a member): linear in the
        size of the graph however long its chains or large its groups.

        The walk starts from the ids no candidate carries (in sorted order, so each blocked
        item records the same absent id whatever the candidate order), then from the
        candidates outside U: an item that reaches an absent id is `dependency_absent`, even
        if it also reaches a rejected candidate, since nothing about the request would let
        this pool place it."""
        dependents: dict[str, list[str]] = {}
        group_of: dict[str, str] = {}
        by_id = self.by_id
        for c in self.admission.candidates:
            for dependency in c.depends_on:
                dependents.setdefault(dependency, []).append(c.id)
            if c.group is not None:
                group_of[c.id] = c.group
        universe = self.universe
        absent = sorted(d for d in dependents if d not in by_id)
        outside = sorted(
            c.id
            for c in self.admission.candidates
            if c.id not in universe and (c.id in dependents or c.group is not None)
        )
        reached_from: dict[str, str | None] = {}
        bad_groups: set[str] = set()
        for origin in (*absent, *outside):
            if origin in reached_from:
                continue
            cause = origin if origin not in by_id else None
            reached_from[origin] = cause
            pending = [origin]
            while pending:
                item_id = pending.pop()
                reached = list(dependents.get(item_id, ()))
                group = group_of.get(item_id)
                if group is not None and group not in bad_groups:
                    bad_groups.add(group)
                    reached.extend(self.group_members[group])
                for other in reached:
                    if other not in reached_from:
                        reached_from[other] = cause
                        pending.append(other)
        self.blocked = {item_id for item_id in reached_from if item_id in universe}
        self.absent_dependency = {
            item_id: cause
            for item_id, cause in reached_from.items()
            if cause is not None and item_id in universe
        }
        for group, members in sorted(self.group_members.items()):
            if not any(self.by_id[m].group_required for m in members):
                continue
            present = [m for m in members if m in self.universe]
            if present and any(m in self.blocked or m not in self.universe for m in members):
                raise Refused(Pass.PLAN, RefusalReason.REQUIRED_GROUP_UNSATISFIED, group)
