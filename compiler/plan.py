"""Pass 5, plan: choose the packet inside U, allocating the budget by evidential obligation.

In order of obligation:

1. Mandatory items and the items the request names, at their cheapest allowed form; then every
   required group that has a member in U, whole. If they do not fit: `mandatory_over_budget`
   (or `required_group_unsatisfied`).
2. For each required proposition, in contract order: its best supporting item and, where U
   holds one, its best contradicting item. "Best" is the precedence of the item's class in the
   proposition's `accepted_classes`, then relevance, then fewer tokens, then id.
3. Further supporting evidence up to each required proposition's `max_items`; then steps 2 and
   3 again for the propositions that are not required. Corroborating items add no coverage, so
   they need `min_relevance`. Evidence nobody asked for is `not_needed_for_contract`.
4. Context that speaks to no proposition, by requirement class: required, then preferred, then
   discretionary, each by relevance (the last two only at or above `min_relevance`).

Steps 2-3 stop at the first unit that does not fit, so raising the budget can only lengthen the
evidence that was chosen, never swap it: budget chooses within U and never takes support away.
Discretionary context is added speculatively; when the rendered packet overruns, the policy's
`on_overrun` drops the last discretionary item and tries again. Finally every item that is not
mandatory takes the highest-ranked form the leftover budget allows (never below its floor).

An item enters with its dependencies and its group, or not at all.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from .admit import Admission, Rejected
from .codes import (
    OrderRole,
    Outcome,
    Pass,
    Reason,
    RefusalReason,
    Requirement,
    SlotReason,
    SlotState,
)
from .errors import Refused
from .models import Candidate, Contract, Form, Proposition, Request, Slot
from .trace import Trace


@dataclass(slots=True)
class Placement:
    candidate: Candidate
    form: Form
    mandatory: bool
    order: int


@dataclass(slots=True)
class Plan:
    packet: list[Placement]
    rejected: dict[str, Rejected]
    slots: list[Slot]
    tokens_used: int
    supporters: dict[str, list[Candidate]] = field(default_factory=dict)
    contradictors: dict[str, list[Candidate]] = field(default_factory=dict)


def plan(
    request: Request,
    contract: Contract,
    admission: Admission,
    by_id: Mapping[str, Candidate],
    trace: Trace,
) -> Plan:
    return _Planner(request, contract, admission, by_id, trace).run()


class _Planner:
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

    # ------------------------------------------------------------------ steps

    def run(self) -> Plan:
        self.find_blocked()
        self.place_obligations()
        self.place_evidence()
        self.place_context()
        self.upgrade_forms()
        return self.finish()

    def find_blocked(self) -> None:
        """Items of U whose unit reaches an item outside U, by one walk back from those items
        along "travels with" (dependents, and the whole group of a member): linear in the
        size of the graph however long its chains or large its groups."""
        dependents: dict[str, list[str]] = {}
        group_of: dict[str, str] = {}
        for c in self.admission.candidates:
            for dependency in c.depends_on:
                dependents.setdefault(dependency, []).append(c.id)
            if c.group is not None:
                group_of[c.id] = c.group
        universe = self.universe
        bad = {
            c.id
            for c in self.admission.candidates
            if c.id not in universe and (c.id in dependents or c.group is not None)
        }
        bad_groups: set[str] = set()
        pending = list(bad)
        while pending:
            item_id = pending.pop()
            reached = list(dependents.get(item_id, ()))
            group = group_of.get(item_id)
            if group is not None and group not in bad_groups:
                bad_groups.add(group)
                reached.extend(self.group_members[group])
            for other in reached:
                if other not in bad:
                    bad.add(other)
                    pending.append(other)
        self.blocked = {item_id for item_id in bad if item_id in universe}
        for group, members in sorted(self.group_members.items()):
            if not any(self.by_id[m].group_required for m in members):
                continue
            present = [m for m in members if m in self.universe]
            if present and any(m in self.blocked or m not in self.universe for m in members):
                raise Refused(Pass.PLAN, RefusalReason.REQUIRED_GROUP_UNSATISFIED, group)

    def place_obligations(self) -> None:
        for name in self.request.named:
            if name not in self.universe:
                rejection = self.admission.rejection(name)
                detail = rejection[0] if rejection else "missing"
                self.trace.add(Pass.PLAN, Outcome.REFUSED, name, "named", detail)
                raise Refused(Pass.PLAN, RefusalReason.NAMED_NOT_ADMISSIBLE, detail)
            if name in self.blocked:
                self.trace.add(Pass.PLAN, Outcome.REFUSED, name, "named", "dependency_missing")
                raise Refused(
                    Pass.PLAN, RefusalReason.NAMED_NOT_ADMISSIBLE, Reason.DEPENDENCY_MISSING
                )
        heads = sorted(
            {*self.request.named}
            | {
                c.id
                for c in self.admission.admitted
                if c.requirement is Requirement.MANDATORY and c.id not in self.blocked
            }
        )
        for head in heads:
            if head in self.placed:  # it came with an earlier head, and so did its unit
                continue
            members = self.unit(self.universe[head])
            self.place(members, mandatory=True, why="mandatory", about=None)
        if self.used > self.budget:
            raise Refused(
                Pass.PLAN,
                RefusalReason.MANDATORY_OVER_BUDGET,
                f"needs {self.used} of {self.budget} tokens",
            )
        for group, member_ids in sorted(self.group_members.items()):
            in_universe = [self.universe[m] for m in member_ids if m in self.universe]
            if not in_universe or not any(c.group_required for c in in_universe):
                continue
            units: list[Candidate] = []
            taken: set[str] = set()
            for c in in_universe:
                if c.id in taken:  # its unit is already among the units taken
                    continue
                for m in self.unit(c):
                    if m.id not in taken:
                        taken.add(m.id)
                        units.append(m)
            if self.used + self.unit_cost(units) > self.budget:
                raise Refused(Pass.PLAN, RefusalReason.REQUIRED_GROUP_UNSATISFIED, group)
            mandatory = in_universe[0].requirement is Requirement.MANDATORY
            self.place(units, mandatory=mandatory, why="required_group", about=group)

    def place_evidence(self) -> None:
        speaks_to = self.admission.speaks_to
        supporters: dict[str, list[Candidate]] = {p.key: [] for p in self.contract.propositions}
        contradictors: dict[str, list[Candidate]] = {p.key: [] for p in self.contract.propositions}
        for c in self.admission.admitted:
            typed = speaks_to.get(c.id)
            if not typed:
                continue
            for p in c.supports:
                if p in typed:
                    supporters[p].append(c)
            for p in c.contradicts:
                if p in typed:
                    contradictors[p].append(c)
        for proposition in self.contract.propositions:
            precedence = {cls: i for i, cls in enumerate(proposition.accepted_classes)}

            def best_first(c: Candidate, precedence: dict[str, int] = precedence):
                return (precedence[c.evidence_class], -c.relevance, self.form_for(c).tokens, c.id)

            supporters[proposition.key].sort(key=best_first)
            contradictors[proposition.key].sort(key=best_first)
        self.supporters, self.contradictors = supporters, contradictors

        self.stopped = False
        required = [p for p in self.contract.propositions if p.required]
        optional = [p for p in self.contract.propositions if not p.required]
        for proposition in required:
            self.primary(proposition)
        for proposition in required:
            self.corroborate(proposition)
        for proposition in optional:
            self.primary(proposition)
        for proposition in optional:
            self.corroborate(proposition)

        for c in self.admission.admitted:
            if speaks_to.get(c.id) and c.id not in self.placed:
                self.mark(c, Reason.NOT_NEEDED_FOR_CONTRACT)

    def offer_evidence(self, c: Candidate, why: str, proposition: str) -> bool:
        if c.id in self.placed:
            return True
        if self.stopped:
            self.mark(c, Reason.BUDGET_EXCEEDED)
            return False
        members = self.unit(c)
        if self.used + self.unit_cost(members) > self.budget:
            self.stopped = True
            self.mark(c, Reason.BUDGET_EXCEEDED)
            return False
        self.place(members, mandatory=False, why=why, about=proposition)
        return True

    def usable(self, items: list[Candidate]) -> list[Candidate]:
        return [c for c in items if c.id not in self.blocked]

    def primary(self, proposition: Proposition) -> None:
        key = proposition.key
        supporters = self.usable(self.supporters[key])
        if supporters and not any(c.id in self.placed for c in supporters):
            self.offer_evidence(supporters[0], "support", key)
        contradictors = self.usable(self.contradictors[key])
        if contradictors and not any(c.id in self.placed for c in contradictors):
            self.offer_evidence(contradictors[0], "contradiction", key)

    def corroborate(self, proposition: Proposition) -> None:
        key = proposition.key
        supporters = self.usable(self.supporters[key])
        count = sum(1 for c in supporters if c.id in self.placed)
        for c in supporters:
            if count >= proposition.max_items:
                break
            if c.id in self.placed:
                continue
            if c.relevance < self.policy.min_relevance:
                self.mark(c, Reason.BELOW_MIN_RELEVANCE)
                continue
            self.offer_evidence(c, "corroboration", key)
            count += 1

    def place_context(self) -> None:
        context = [
            c
            for c in self.admission.admitted
            if not self.admission.speaks_to.get(c.id)
            and c.id not in self.placed
            and c.id not in self.blocked
        ]
        context.sort(key=lambda c: (-c.relevance, c.id))
        floor = self.policy.min_relevance
        for requirement in (Requirement.REQUIRED, Requirement.PREFERRED):
            for c in context:
                if c.requirement is not requirement or c.id in self.placed:
                    continue
                if requirement is not Requirement.REQUIRED and c.relevance < floor:
                    self.mark(c, Reason.BELOW_MIN_RELEVANCE)
                    continue
                members = self.unit(c)
                if self.used + self.unit_cost(members) > self.budget or self.brings_evidence(
                    members
                ):
                    self.mark(c, Reason.BUDGET_EXCEEDED)
                    continue
                self.place(members, mandatory=False, why=requirement, about=None)

        speculative: list[list[str]] = []
        for c in context:
            if c.requirement is not Requirement.DISCRETIONARY or c.id in self.placed:
                continue
            if c.relevance < floor:
                self.mark(c, Reason.BELOW_MIN_RELEVANCE)
                continue
            members = self.unit(c)
            if self.brings_evidence(members):
                self.mark(c, Reason.BUDGET_EXCEEDED)
                continue
            speculative.append(
                self.place(members, mandatory=False, why=Requirement.DISCRETIONARY, about=None)
            )
        self.resolve_overrun(speculative)

    def brings_evidence(self, members: list[Candidate]) -> bool:
        """Whether context would pull in evidence after the evidence steps ran out of budget.

        Evidence enters by obligation only. Once the evidence steps have stopped, a context
        item whose dependencies include evidence the budget did not cover must not carry that
        evidence in through the back door: at a larger budget the evidence steps reach further,
        leave less room for the context, and the slot would lose the support it had at the
        smaller budget (invariant 7).
        """
        return self.stopped and any(
            m.id not in self.placed and self.admission.speaks_to.get(m.id) for m in members
        )

    def resolve_overrun(self, speculative: list[list[str]]) -> None:
        if self.policy.on_overrun != "drop_last_discretionary":  # pragma: no cover - validated
            raise ValueError(f"unsupported on_overrun {self.policy.on_overrun!r}")
        while self.used > self.budget and speculative:
            for item_id in reversed(speculative.pop()):
                placement = self.placed.pop(item_id)
                self.used -= placement.form.tokens
                self.mark(placement.candidate, Reason.BUDGET_EXCEEDED)
                self.trace.add(Pass.PLAN, Outcome.DROPPED, item_id, Reason.BUDGET_EXCEEDED)

    def upgrade_forms(self) -> None:
        keep_cheapest = self.policy.mandatory_form == "cheapest"
        for placement in self.placed.values():
            if placement.mandatory and keep_cheapest:
                continue
            c = placement.candidate
            if not c.forms:
                continue
            spare = self.budget - self.used + placement.form.tokens
            best = max(
                (f for f in c.allowed_forms() if f.tokens <= spare),
                key=lambda f: f.rank,
            )
            self.used += best.tokens - placement.form.tokens
            placement.form = best

    # ------------------------------------------------------------------ result

    def finish(self) -> Plan:
        rejected: dict[str, Rejected] = {}
        for c in self.admission.admitted:
            if c.id in self.placed:
                continue
            if c.id in self.blocked:
                reason = Reason.DEPENDENCY_MISSING
            else:
                reason = self.marks.get(c.id, Reason.NOT_NEEDED_FOR_CONTRACT)
            rejected[c.id] = (reason.value, None)
            self.trace.add(Pass.PLAN, Outcome.REJECTED, c.id, reason)
        order = {role: i for i, role in enumerate(self.policy.role_order)}
        packet = sorted(self.placed.values(), key=lambda pl: (order[pl.candidate.role], pl.order))
        slots = [self.slot(p) for p in self.contract.propositions]
        return Plan(packet, rejected, slots, self.used, self.supporters, self.contradictors)

    def slot(self, proposition: Proposition) -> Slot:
        key = proposition.key
        supporters = self.supporters[key]
        contradictors = self.contradictors[key]
        in_packet = [c.id for c in supporters if c.id in self.placed]
        against = [c.id for c in contradictors if c.id in self.placed]
        if contradictors:
            state, reason, ids = (
                SlotState.CONTRADICTED,
                SlotReason.SOURCES_DISAGREE,
                in_packet + against,
            )
        elif in_packet:
            state, reason, ids = SlotState.SUPPORTED, SlotReason.ACCEPTED_EVIDENCE, in_packet
        elif any(self.marks.get(c.id) is Reason.BUDGET_EXCEEDED for c in supporters):
            state, reason, ids = SlotState.UNKNOWN, SlotReason.EVIDENCE_OVER_BUDGET, []
        else:
            state, reason, ids = SlotState.UNKNOWN, SlotReason.NO_ADMISSIBLE_EVIDENCE, []
        return Slot(
            proposition=key,
            state=state,
            resource_ids=tuple(ids),
            reason=reason,
            required=proposition.required,
        )


_MARK_STRENGTH = {
    Reason.NOT_NEEDED_FOR_CONTRACT: 0,
    Reason.BELOW_MIN_RELEVANCE: 1,
    Reason.BUDGET_EXCEEDED: 2,
}


__all__ = ["Placement", "Plan", "plan", "OrderRole"]
