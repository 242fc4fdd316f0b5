"""A `Compiled` as the library's `CompileOutput` model (the CLI writes JSON without it)."""

from __future__ import annotations

from compiler._codes import Result
from compiler._compiled import Compiled, RejectionRow
from compiler._output import (
    CompileOutput,
    ContractRef,
    NormalisedRequest,
    PacketItem,
    Refusal,
    Slot,
)
from compiler._records import Records, Rejection
from compiler._trace import entry
from compiler.version import COMPILER_VERSION


def _rejection(row: RejectionRow) -> Rejection:
    return {"id": row[0], "reason": row[1], "detail": row[2]}


def to_output(compiled: Compiled) -> CompileOutput:
    contract = ContractRef(**compiled.contract)
    request = None if compiled.request is None else NormalisedRequest(**compiled.request)
    trace = Records(build=lambda: map(entry, compiled.trace()))
    if compiled.refusal is not None:
        pass_, reason, detail = compiled.refusal
        return CompileOutput(
            result=Result.REFUSED,
            compiler_version=COMPILER_VERSION,
            contract=contract,
            request=request,
            token_budget=compiled.token_budget,
            trace=trace,
            refusal=Refusal(pass_=pass_, reason=reason, detail=detail),
        )
    rows = compiled.rejections
    assert rows is not None
    return CompileOutput.model_construct(
        result=Result.COMPILED,
        plan_id=compiled.plan_id,
        compiler_version=COMPILER_VERSION,
        contract=contract,
        request=request,
        token_budget=compiled.token_budget,
        tokens_used=compiled.tokens_used,
        packet=tuple(PacketItem(**item) for item in compiled.packet),
        slots=tuple(
            Slot(
                proposition=s.proposition,
                state=s.state,
                resource_ids=s.resource_ids,
                reason=s.reason,
                required=s.required,
            )
            for s in compiled.slots
        ),
        decision_ready=compiled.decision_ready,
        blocking=compiled.blocking,
        rejected=Records(build=lambda: map(_rejection, rows())),
        valid_until=compiled.valid_until,
        trace=trace,
        refusal=None,
    )
