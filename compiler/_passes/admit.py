"""Pass 4, admit: authorisation, applicability and evidence class, for every candidate.

The checks run in this order and the first failure names the rejection:

| reason               | detail        | the candidate fails when                              |
| -------------------- | ------------- | ----------------------------------------------------- |
| not_authorised       | denied        | the principal, the delegated service or a role of the |
|                      |               | principal is denied (deny dominates every allow, and  |
|                      |               | a delegation's scopes never lift a deny)              |
| not_authorised       | role          | no effective role is allowed                          |
| not_authorised       | purpose       | the request's purpose is not allowed                  |
| not_applicable       | entity        | it concerns another entity (an `entity` of "*"        |
|                      |               | concerns every entity)                                |
| not_applicable       | not_yet_valid | its validity starts after the decision date           |
| not_applicable       | expired       | its last valid day is before the decision date        |
| not_applicable       | superseded    | it is marked superseded, or the candidate that        |
|                      |               | supersedes it is in force on the decision date or is  |
|                      |               | not in the pool (replaced, just not retrieved)        |
| wrong_evidence_class | -             | it speaks to propositions of the contract, none of    |
|                      |               | which accepts its class; or it is evidence for        |
|                      |               | nothing the contract asks                             |

What passes is the admitted universe U. Relevance plays no part here.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from compiler._codes import ALL_ENTITIES, Detail, OrderRole, Outcome, Pass, Reason
from compiler._passes.resolve import Resolution
from compiler._trace import Trace, TraceRow

if TYPE_CHECKING:
    from compiler._slotted import AnyCandidate as Candidate
    from compiler._slotted import AnyContract as Contract
    from compiler._slotted import AnyRequest as Request

Rejected = tuple[str, str | None]
"""A rejection as (reason, detail) in plain strings: see `trace` on why not enum members."""

_DENIED = (Reason.NOT_AUTHORISED.value, Detail.DENIED.value)
_ROLE = (Reason.NOT_AUTHORISED.value, Detail.ROLE.value)
_PURPOSE = (Reason.NOT_AUTHORISED.value, Detail.PURPOSE.value)
_ENTITY = (Reason.NOT_APPLICABLE.value, Detail.ENTITY.value)
_NOT_YET_VALID = (Reason.NOT_APPLICABLE.value, Detail.NOT_YET_VALID.value)
_EXPIRED = (Reason.NOT_APPLICABLE.value, Detail.EXPIRED.value)
_SUPERSEDED = (Reason.NOT_APPLICABLE.value, Detail.SUPERSEDED.value)
_WRONG_CLASS = (Reason.WRONG_EVIDENCE_CLASS.value, None)


class Admission:
    # (A plain class rather than a dataclass: a small compile is mostly its imports.)
    __slots__ = ("candidates", "decisions", "admitted", "speaks_to", "waiting")

    def __init__(
        self,
        candidates: Sequence[Candidate],
        decisions: list[Rejected | None],
        admitted: list[Candidate],
        speaks_to: dict[str, frozenset[str]],
        waiting: list[Candidate],
    ) -> None:
        self.candidates = candidates
        """Every candidate, in id order."""
        self.decisions = decisions
        """For each candidate, in the same order, why it was rejected (None: admitted)."""
        self.admitted = admitted
        """U, in id order."""
        self.speaks_to = speaks_to
        """For each admitted candidate, the propositions its class lets it support or
        contradict."""
        self.waiting = waiting
        """Rejected only because they are not yet valid (and would pass the later checks), or
        superseded by an item in force: the candidates whose dates bound how long this
        admitted set stays the same."""

    def rejection(self, candidate_id: str) -> Rejected | None:
        for c, decision in zip(self.candidates, self.decisions, strict=True):
            if c.id == candidate_id:
                return decision
        return None

    def rejections(self) -> Iterator[tuple[str, Rejected]]:
        """(id, (reason, detail)) for every candidate admission rejected, in id order."""
        for c, decision in zip(self.candidates, self.decisions, strict=True):
            if decision is not None:
                yield c.id, decision

    def trace_rows(self) -> Iterator[TraceRow]:
        admit_pass = Pass.ADMIT.value
        admitted, rejected = Outcome.ADMITTED.value, Outcome.REJECTED.value
        for c, decision in zip(self.candidates, self.decisions, strict=True):
            if decision is None:
                yield (c.id, admit_pass, admitted, None, None)
            else:
                yield (c.id, admit_pass, rejected, decision[0], decision[1])


def accepted_classes(contract: Contract) -> dict[str, frozenset[str]]:
    return {p.key: frozenset(p.accepted_classes) for p in contract.propositions}


def in_force(candidate: Candidate, on: dt.date) -> bool:
    return candidate.valid_from <= on and (candidate.valid_to is None or on <= candidate.valid_to)


def admit(
    candidates: Sequence[Candidate],
    by_id: Mapping[str, Candidate],
    request: Request,
    resolution: Resolution,
    contract: Contract,
    trace: Trace,
) -> Admission:
    roles = resolution.effective_roles
    # Deny dominates across the delegation join: a delegation can only narrow what the
    # principal may read, so a deny on any of the principal's own roles still applies.
    denied_if = roles | resolution.principal_roles
    denied_principals = {request.principal}
    if request.delegation is not None:
        denied_principals.add(request.delegation.service)
    purpose = request.purpose
    entity = resolution.entity
    on = request.decision_date
    accepted = accepted_classes(contract)

    admitted: list[Candidate] = []
    decisions: list[Rejected | None] = []
    decide = decisions.append
    speaks_to: dict[str, frozenset[str]] = {}
    waiting: list[Candidate] = []

    for c in candidates:
        failure: Rejected | None = None
        if (c.denied_principals and not denied_principals.isdisjoint(c.denied_principals)) or (
            c.denied_roles and not denied_if.isdisjoint(c.denied_roles)
        ):
            failure = _DENIED
        elif roles.isdisjoint(c.allowed_roles):
            failure = _ROLE
        elif purpose not in c.allowed_purposes:
            failure = _PURPOSE
        elif c.entity != entity and c.entity != ALL_ENTITIES:
            failure = _ENTITY
        elif on < c.valid_from:
            failure = _NOT_YET_VALID
            # It bounds valid_until only if it would be admitted once valid: a superseded or
            # wrong-class item that comes into force leaves U as it is.
            if not _superseded_for_good(c, by_id) and _typed_propositions(c, accepted) is not None:
                waiting.append(c)
        elif c.valid_to is not None and on > c.valid_to:
            failure = _EXPIRED
        elif c.superseded:
            failure = _SUPERSEDED
        elif c.superseded_by is not None and (
            (successor := by_id.get(c.superseded_by)) is None or in_force(successor, on)
        ):
            failure = _SUPERSEDED
            # Only a successor in the pool can go out of force and let this item back.
            if successor is not None and _typed_propositions(c, accepted) is not None:
                waiting.append(c)
        else:
            typed = _typed_propositions(c, accepted)
            if typed is None:
                failure = _WRONG_CLASS
            else:
                speaks_to[c.id] = typed

        if failure is None:
            admitted.append(c)
        decide(failure)
    admission = Admission(candidates, decisions, admitted, speaks_to, waiting)
    trace.add_segment(admission.trace_rows)
    return admission


def _superseded_for_good(c: Candidate, by_id: Mapping[str, Candidate]) -> bool:
    """Marked superseded, or replaced by an item the pool does not hold: no date brings it back."""
    return c.superseded or (c.superseded_by is not None and c.superseded_by not in by_id)


def _typed_propositions(
    c: Candidate, accepted: Mapping[str, frozenset[str]]
) -> frozenset[str] | None:
    """The contract propositions this candidate may speak to, or None if it must be rejected.

    A weak class never promotes a slot: a candidate that speaks only to propositions that do not
    accept its class is rejected however relevant or well worded it is. Context that speaks to
    no proposition (instructions, the task, tools) is admitted when its role is not evidence.
    """
    named = [p for p in (*c.supports, *c.contradicts) if p in accepted]
    if not named:
        return None if c.role is OrderRole.EVIDENCE else frozenset()
    typed = frozenset(p for p in named if c.evidence_class in accepted[p])
    return typed or None
