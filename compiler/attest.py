"""Pass 6, attest: hashes, plan id, expiry, and the release invariants checked on every compile.

A violated invariant is a bug in the compiler, never an answer: the compile is refused
`invariant_violated` with the invariant's name as detail, and nothing is released.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Iterator, Mapping

from .admit import Admission
from .canonical import sha256_hex
from .codes import Outcome, Pass, RefusalReason, Result, SlotState
from .errors import Refused
from .models import (
    Candidate,
    CompileInput,
    CompileOutput,
    Contract,
    ContractRef,
    NormalisedRequest,
    PacketItem,
    Rejection,
)
from .plan import Plan
from .records import Records
from .resolve import Resolution
from .trace import Trace
from .version import COMPILER_VERSION


def contract_ref(document: CompileInput) -> ContractRef:
    contract = document.contract
    return ContractRef(
        decision_type=contract.decision_type,
        version=contract.version,
        sha256=contract_sha256(contract),
    )


# The last contract hashed (the object itself, kept alive) and its sha256. A sweep compiles
# the same contract object a dozen times or more, and a run through the workbench all its
# scenarios with one; its RFC 8785 serialisation cost more than the rest of a small compile.
# Models are frozen, so an object's hash never changes; the pair is read and replaced whole,
# so threads cannot see one contract with another's hash.
_last_contract: tuple[Contract, str] | None = None


def contract_sha256(contract: Contract) -> str:
    global _last_contract
    last = _last_contract
    if last is not None and last[0] is contract:
        return last[1]
    digest = sha256_hex(contract.model_dump(mode="json"))
    _last_contract = (contract, digest)
    return digest


def normalised_request(document: CompileInput, resolution: Resolution) -> NormalisedRequest:
    request = document.request
    return NormalisedRequest(
        decision_type=request.decision_type,
        principal=request.principal,
        roles=tuple(sorted(set(request.roles))),
        effective_roles=tuple(sorted(resolution.effective_roles)),
        purpose=request.purpose,
        entity=resolution.entity,
        entity_as_given=request.entity,
        decision_date=request.decision_date,
        token_budget=request.token_budget,
        delegation=request.delegation,
        named=tuple(request.named),
    )


def attest(
    document: CompileInput,
    by_id: Mapping[str, Candidate],
    resolution: Resolution,
    admission: Admission,
    planned: Plan,
    trace: Trace,
) -> CompileOutput:
    check_invariants(document, admission, planned)
    contract = contract_ref(document)
    request = normalised_request(document, resolution)
    packet = tuple(
        PacketItem(
            id=pl.candidate.id,
            role=pl.candidate.role,
            form_rank=pl.form.rank,
            tokens=pl.form.tokens,
            content=pl.form.content,
            evidence_class=pl.candidate.evidence_class,
            requirement=pl.candidate.requirement,
            supports=tuple(
                p for p in pl.candidate.supports if p in admission.speaks_to[pl.candidate.id]
            ),
            contradicts=tuple(
                p for p in pl.candidate.contradicts if p in admission.speaks_to[pl.candidate.id]
            ),
        )
        for pl in planned.packet
    )
    rejected = Records(build=lambda: _rejections(admission, planned))
    blocking = tuple(
        s.proposition for s in planned.slots if s.required and s.state != SlotState.SUPPORTED
    )
    admitted_digest = hashlib.sha256(
        "\n".join(c.id for c in admission.admitted).encode()
    ).hexdigest()
    plan_id = sha256_hex(
        {
            "compiler_version": COMPILER_VERSION,
            "contract": contract.sha256,
            "request": request.model_dump(mode="json"),
            "admitted": admitted_digest,
            "packet": [[i.id, i.form_rank, i.tokens] for i in packet],
            "slots": [[s.proposition, s.state, list(s.resource_ids)] for s in planned.slots],
        }
    )
    trace.add(Pass.ATTEST, Outcome.ATTESTED, reason=None, detail=plan_id)
    return CompileOutput.model_construct(
        result=Result.COMPILED,
        plan_id=plan_id,
        compiler_version=COMPILER_VERSION,
        contract=contract,
        request=request,
        token_budget=document.request.token_budget,
        tokens_used=planned.tokens_used,
        packet=packet,
        slots=tuple(planned.slots),
        decision_ready=not blocking,
        blocking=blocking,
        rejected=rejected,
        valid_until=valid_until(document, by_id, admission),
        trace=trace.records(),
        refusal=None,
    )


def _rejections(admission: Admission, planned: Plan) -> Iterator[Rejection]:
    """Every candidate not in the packet, in id order, with its reason and detail."""
    later = planned.rejected
    for c, decision in zip(admission.candidates, admission.decisions, strict=True):
        if decision is None:
            decision = later.get(c.id)
            if decision is None:
                continue
        yield {"id": c.id, "reason": decision[0], "detail": decision[1]}


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
