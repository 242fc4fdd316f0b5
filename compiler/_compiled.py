"""`Compiled`: what a compile decided, before it becomes a `CompileOutput` or JSON text.

The passes fill it without pydantic. `_compiled_to_output.to_output` turns it into the library's
`CompileOutput`; `_output_json.compiled_pieces` writes the same output's JSON directly (the
CLI), one trace row and one rejection at a time, never holding all of them as dicts.
Its parts are already in their JSON form where the output has one (the contract reference,
the normalised request, the packet items), so both read the same values.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from compiler._canonical import sha256_hex
from compiler._slotted import PlainContract

if TYPE_CHECKING:
    from compiler._passes.resolve import Resolution
    from compiler._slotted import AnyContract, AnyInput
    from compiler._trace import TraceRow

RejectionRow = tuple[str, str, str | None]
"""A rejection as (id, reason, detail)."""

REJECTION_KEYS = ("id", "reason", "detail")


class Compiled:
    """Keyword arguments only; what a refused compile leaves out keeps the output's default.

    (A plain class rather than a dataclass: a small compile is mostly its imports.)
    """

    __slots__ = (
        "result",
        "contract",
        "request",
        "token_budget",
        "trace",
        "plan_id",
        "tokens_used",
        "packet",
        "slots",
        "decision_ready",
        "blocking",
        "rejections",
        "valid_until",
        "refusal",
    )

    def __init__(
        self,
        *,
        result: str,
        contract: dict[str, Any],
        request: dict[str, Any] | None,
        token_budget: int,
        trace: Callable[[], Iterator[TraceRow]],
        plan_id: str | None = None,
        tokens_used: int = 0,
        packet: tuple[dict[str, Any], ...] = (),
        slots: tuple[Any, ...] = (),
        decision_ready: bool = False,
        blocking: tuple[str, ...] = (),
        rejections: Callable[[], Iterator[RejectionRow]] | None = None,
        valid_until: dt.date | None = None,
        refusal: tuple[str, str, str | None] | None = None,
    ) -> None:
        self.result = result
        self.contract = contract
        """{decision_type, version, sha256}, as the output's `ContractRef` dumps."""
        self.request = request
        """The normalised request as the output's `NormalisedRequest` dumps it."""
        self.token_budget = token_budget
        self.trace = trace
        self.plan_id = plan_id
        self.tokens_used = tokens_used
        self.packet = packet
        """Each item as the output's `PacketItem` dumps it (enum members for role and
        requirement)."""
        self.slots = slots
        """`plan.PlannedSlot`s."""
        self.decision_ready = decision_ready
        self.blocking = blocking
        self.rejections = rejections
        self.valid_until = valid_until
        self.refusal = refusal
        """(pass, reason, detail) of a refused compile."""


def contract_ref(document: AnyInput) -> dict[str, Any]:
    contract = document.contract
    return {
        "decision_type": contract.decision_type,
        "version": contract.version,
        "sha256": contract_sha256(contract),
    }


# The last contract hashed (the object itself, kept alive) and its sha256. A sweep compiles
# the same contract object a dozen times or more, and a run through the workbench all its
# scenarios with one; its RFC 8785 serialisation cost more than the rest of a small compile.
# Contracts are frozen, so an object's hash never changes; the pair is read and replaced
# whole, so threads cannot see one contract with another's hash.
_last_contract: tuple[AnyContract, str] | None = None


def contract_sha256(contract: AnyContract) -> str:
    global _last_contract
    last = _last_contract
    if last is not None and last[0] is contract:
        return last[1]
    if isinstance(contract, PlainContract):
        value = contract.json_value()
    else:
        value = contract.model_dump(mode="json")
    digest = sha256_hex(value)
    _last_contract = (contract, digest)
    return digest


def normalised_request(document: AnyInput, resolution: Resolution) -> dict[str, Any]:
    request = document.request
    delegation = request.delegation
    return {
        "decision_type": request.decision_type,
        "principal": request.principal,
        "roles": sorted(set(request.roles)),
        "effective_roles": sorted(resolution.effective_roles),
        "purpose": request.purpose,
        "entity": resolution.entity,
        "entity_as_given": request.entity,
        "decision_date": request.decision_date.isoformat(),
        "token_budget": request.token_budget,
        "delegation": None
        if delegation is None
        else {
            "service": delegation.service,
            "on_behalf_of": delegation.on_behalf_of,
            "scopes": list(delegation.scopes),
            "valid_from": delegation.valid_from.isoformat(),
            "valid_to": None if delegation.valid_to is None else delegation.valid_to.isoformat(),
            "revoked": delegation.revoked,
        },
        "named": list(request.named),
    }
