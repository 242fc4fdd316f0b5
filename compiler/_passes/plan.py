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

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from compiler._codes import (
    OrderRole,
    Outcome,
    Pass,
    Reason,
    RefusalReason,
    Requirement,
    SlotReason,
    SlotState,
)
from compiler._errors import Refused
from compiler._passes.admit import Admission, Rejected
from compiler._passes.plan_units import Placement, Units
from compiler._trace import Trace

if TYPE_CHECKING:
    from compiler._slotted import AnyCandidate as Candidate
    from compiler._slotted import AnyContract as Contract
    from compiler._slotted import AnyProposition as Proposition
    from compiler._slotted import AnyRequest as Request


class PlannedSlot:
    """A slot as the plan decides it (the output's `Slot`, without pydantic)."""

    __slots__ = ("proposition", "state", "resource_ids", "reason", "required")

    def __init__(
        self,
        proposition: str,
        state: SlotState,
        resource_ids: tuple[str, ...],
        reason: SlotReason,
        required: bool,
    ) -> None:
        self.proposition = proposition
        self.state = state
        self.resource_ids = resource_ids
        self.reason = reason
        self.required = required


class Plan:
    __slots__ = ("packet", "rejected", "slots", "tokens_used", "supporters", "contradictors")

    def __init__(
        self,
        packet: list[Placement],
        rejected: dict[str, Rejected],
        slots: list[Any],
        tokens_used: int,
        supporters: dict[str, list[Candidate]],
        contradictors: dict[str, list[Candidate]],
    ) -> None:
        self.packet = packet
        self.rejected = rejected
        self.slots = slots
        """`PlannedSlot`s (anything with their attributes: attest reads no more)."""
        self.tokens_used = tokens_used
        self.supporters = supporters
        self.contradictors = contradictors


def plan(
    request: Request,
    contract: Contract,
    admission: Admission,
    by_id: Mapping[str, Candidate],
    trace: Trace,
) -> Plan:
    return _Planner(request, contract, admission, by_id, trace).run()


class _Planner(Units):
    # ------------------------------------------------------------------ steps

    def run(self) -> Plan:
        self.find_blocked()
        self.place_obligations()
        self.place_evidence()
        self.place_context()
        self.upgrade_forms()
        return self.finish()

    def place_obligations(self) -> None:
        for name in self.request.named:
            if name not in self.universe:
                rejection = self.admission.rejection(name)
                detail = rejection[0] if rejection else "missing"
                self.trace.add(Pass.PLAN, Outcome.REFUSED, name, "named", detail)
                raise Refused(Pass.PLAN, RefusalReason.NAMED_NOT_ADMISSIBLE, detail)
            if name in self.blocked:
                why = self.blocked_reason(name)
                self.trace.add(Pass.PLAN, Outcome.REFUSED, name, "named", why)
                raise Refused(Pass.PLAN, RefusalReason.NAMED_NOT_ADMISSIBLE, why)
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
                reason = self.blocked_reason(c.id)
            else:
                reason = self.marks.get(c.id, Reason.NOT_NEEDED_FOR_CONTRACT)
            rejected[c.id] = (reason.value, None)
            # The trace names the id the pool lacks; the rejection keeps to codes.
            absent = self.absent_dependency.get(c.id)
            self.trace.add(Pass.PLAN, Outcome.REJECTED, c.id, reason, absent)
        order = {role: i for i, role in enumerate(self.policy.role_order)}
        packet = sorted(self.placed.values(), key=lambda pl: (order[pl.candidate.role], pl.order))
        slots = [self.slot(p) for p in self.contract.propositions]
        return Plan(packet, rejected, slots, self.used, self.supporters, self.contradictors)

    def slot(self, proposition: Proposition) -> PlannedSlot:
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
        return PlannedSlot(key, state, tuple(ids), reason, proposition.required)


__all__ = ["Placement", "Plan", "plan", "OrderRole"]
