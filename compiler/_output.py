"""The compiler's output shapes: frozen pydantic models with the field names of docs/design.md.

A compile builds them from its `Compiled` result (`_compiled_to_output.to_output`); the CLI
writes the same output's JSON without them (`_output_json`).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from pydantic import ConfigDict, Field

from compiler._codes import OrderRole, Requirement, Result, SlotReason, SlotState
from compiler._input import Delegation, Frozen
from compiler._records import Records, Rejection, TraceEntry


class PacketItem(Frozen):
    id: str
    role: OrderRole
    form_rank: int
    tokens: int
    content: str
    evidence_class: str
    requirement: Requirement
    supports: tuple[str, ...] = ()
    contradicts: tuple[str, ...] = ()


class Slot(Frozen):
    proposition: str
    state: SlotState
    resource_ids: tuple[str, ...]
    reason: SlotReason
    required: bool


class ContractRef(Frozen):
    decision_type: str
    version: str
    sha256: str


class NormalisedRequest(Frozen):
    decision_type: str
    principal: str
    roles: tuple[str, ...]
    effective_roles: tuple[str, ...]
    purpose: str
    entity: str
    entity_as_given: str
    decision_date: dt.date
    token_budget: int
    delegation: Delegation | None
    named: tuple[str, ...]


class Refusal(Frozen):
    pass_: str = Field(alias="pass", serialization_alias="pass")
    reason: str
    detail: str | None = None

    # `pass` is a keyword: the field is `pass_` in Python and `pass` in every dump, whether or not
    # the caller asks for aliases (docs/design.md's interface includes a plain
    # `model_dump(mode="json")`).
    model_config = ConfigDict(
        frozen=True, extra="forbid", populate_by_name=True, serialize_by_alias=True
    )


class CompileOutput(Frozen):
    result: Result
    plan_id: str | None = None
    compiler_version: str
    contract: ContractRef
    request: NormalisedRequest | None = None
    token_budget: int
    tokens_used: int = 0
    packet: tuple[PacketItem, ...] = ()
    slots: tuple[Slot, ...] = ()
    decision_ready: bool = False
    blocking: tuple[str, ...] = ()
    rejected: Records[Rejection] = Records()
    valid_until: dt.date | None = None
    trace: Records[TraceEntry] = Records()
    refusal: Refusal | None = None

    def slot(self, proposition: str) -> Slot:
        return next(s for s in self.slots if s.proposition == proposition)

    @property
    def packet_ids(self) -> tuple[str, ...]:
        return tuple(item.id for item in self.packet)

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)
