"""Pass 6, attest: hashes, plan id, expiry, and the release invariants checked on every compile.

A violated invariant is a bug in the compiler, never an answer: the compile is refused
`invariant_violated` with the invariant's name as detail, and nothing is released.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from compiler._canonical import sha256_hex
from compiler._codes import Outcome, Pass, RefusalReason, Result, SlotState
from compiler._compiled import Compiled, RejectionRow, contract_ref, normalised_request
from compiler._errors import Refused
from compiler._passes.admit import Admission
from compiler._passes.plan import Plan
from compiler._passes.resolve import Resolution
from compiler._trace import Trace
from compiler.version import COMPILER_VERSION

if TYPE_CHECKING:
    from compiler._slotted import AnyCandidate as Candidate
    from compiler._slotted import AnyInput as CompileInput


def attest(
    document: CompileInput,
    by_id: Mapping[str, Candidate],
    resolution: Resolution,
    admission: Admission,
    planned: Plan,
    trace: Trace,
) -> Compiled:
    check_invariants(document, admission, planned)
    contract = contract_ref(document)
    request = normalised_request(document, resolution)
    speaks_to = admission.speaks_to
    packet = tuple(
        {
            "id": pl.candidate.id,
            "role": pl.candidate.role,
            "form_rank": pl.form.rank,
            "tokens": pl.form.tokens,
            "content": pl.form.content,
            "evidence_class": pl.candidate.evidence_class,
            "requirement": pl.candidate.requirement,
            "supports": [p for p in pl.candidate.supports if p in speaks_to[pl.candidate.id]],
            "contradicts": [p for p in pl.candidate.contradicts if p in speaks_to[pl.candidate.id]],
        }
        for pl in planned.packet
    )
    blocking = tuple(
        s.proposition for s in planned.slots if s.required and s.state != SlotState.SUPPORTED
    )
    admitted_digest = hashlib.sha256(
        "\n".join(c.id for c in admission.admitted).encode()
    ).hexdigest()
    plan_id = sha256_hex(
        {
            "compiler_version": COMPILER_VERSION,
            "contract": contract["sha256"],
            "request": request,
            "admitted": admitted_digest,
            "packet": [[i["id"], i["form_rank"], i["tokens"]] for i in packet],
            "slots": [[s.proposition, s.state, list(s.resource_ids)] for s in planned.slots],
        }
    )
    trace.add(Pass.ATTEST, Outcome.ATTESTED, reason=None, detail=plan_id)
    return Compiled(
        result=Result.COMPILED.value,
        plan_id=plan_id,
        contract=contract,
        request=request,
        token_budget=document.request.token_budget,
        tokens_used=planned.tokens_used,
        packet=packet,
        slots=tuple(planned.slots),
        decision_ready=not blocking,
        blocking=blocking,
        rejections=lambda: _rejections(admission, planned),
        valid_until=valid_until(document, by_id, admission),
        trace=trace.snapshot(),
    )


def _rejections(admission: Admission, planned: Plan) -> Iterator[RejectionRow]:
    """Every candidate not in the packet, in id order, with its reason and detail."""
    later = planned.rejected
    for c, decision in zip(admission.candidates, admission.decisions, strict=True):
        if decision is None:
            decision = later.get(c.id)
            if decision is None:
                continue
        yield (c.id, decision[0], decision[1])


def valid_until(
    document: CompileInput, by_id: Mapping[str, Candidate], admission: Admission
) -> dt.date | None:
    """The last day on which the same request would admit the same set.

    The earliest of: the last valid day of an admitted item, of the delegation, or of a
    superseding item now in force (after it the superseded item returns); the day before a
    candidate that is held back only by its start date (or a superseding item not yet in force)
    becomes valid.
    """
    on = document.request.decision_date
    bounds: list[dt.date] = [c.valid_to for c in admission.admitted if c.valid_to is not None]
    delegation = document.request.delegation
    if delegation is not None and delegation.valid_to is not None:
        bounds.append(delegation.valid_to)
    day = dt.timedelta(days=1)
    for c in admission.waiting:
        if on < c.valid_from:
            bounds.append(c.valid_from - day)
        else:
            successor = by_id[c.superseded_by]  # type: ignore[index]
            if successor.valid_to is not None:
                bounds.append(successor.valid_to)
    for c in admission.admitted:
        if c.superseded_by is not None:
            successor = by_id[c.superseded_by]
            if successor.valid_from > on:
                bounds.append(successor.valid_from - day)
    return min(bounds, default=None)


def check_invariants(document: CompileInput, admission: Admission, planned: Plan) -> None:
    """The release invariants 1-4 of docs/design.md, checked on the plan before anything leaves."""
    universe = {c.id for c in admission.admitted}
    contract = document.contract
    accepted = {p.key: set(p.accepted_classes) for p in contract.propositions}
    in_packet = {pl.candidate.id: pl.candidate for pl in planned.packet}

    def violated(name: str) -> Refused:
        return Refused(Pass.ATTEST, RefusalReason.INVARIANT_VIOLATED, name)

    if not set(in_packet) <= universe:
        raise violated("packet_within_admitted_universe")
    if planned.tokens_used > document.request.token_budget or planned.tokens_used != sum(
        pl.form.tokens for pl in planned.packet
    ):
        raise violated("tokens_within_budget")
    if [s.proposition for s in planned.slots] != [p.key for p in contract.propositions]:
        raise violated("one_slot_per_proposition")
    for slot in planned.slots:
        classes = accepted[slot.proposition]
        for item_id in slot.resource_ids:
            item = in_packet.get(item_id)
            if item is None or item.evidence_class not in classes:
                raise violated("slot_backed_by_accepted_class")
        if slot.state == SlotState.SUPPORTED:
            disagreeing = any(
                slot.proposition in c.contradicts and c.evidence_class in classes
                for c in admission.admitted
            )
            if disagreeing or not slot.resource_ids:
                raise violated("contradiction_visible")
    for pl in planned.packet:
        floor = pl.candidate.floor or 0
        if pl.form.rank < floor:
            raise violated("form_at_or_above_floor")
