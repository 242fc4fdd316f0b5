"""Pass 3, type-check: the request asks for a decision this contract defines, for a purpose
it permits. Owns `decision_type_mismatch` and `purpose_not_permitted`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from compiler._codes import Outcome, Pass, RefusalReason
from compiler._errors import Refused

if TYPE_CHECKING:
    from compiler._slotted import AnyContract as Contract
    from compiler._slotted import AnyRequest as Request
from compiler._trace import Trace


def type_check(request: Request, contract: Contract, trace: Trace) -> None:
    if request.decision_type != contract.decision_type:
        raise Refused(Pass.TYPE_CHECK, RefusalReason.DECISION_TYPE_MISMATCH)
    if request.purpose not in contract.purposes:
        raise Refused(Pass.TYPE_CHECK, RefusalReason.PURPOSE_NOT_PERMITTED)
    trace.add(Pass.TYPE_CHECK, Outcome.CHECKED, detail=f"{len(contract.propositions)} slots")
