"""Pass 1, parse: the validated document becomes a decision request.

Malformed input never reaches this pass: `CompileInput` validation has already listed every
problem (including a mismatched expected policy). What is left is to record, in the trace,
which decision type and policy the request was parsed against.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from compiler._codes import Outcome, Pass

if TYPE_CHECKING:
    from compiler._slotted import AnyInput as CompileInput
from compiler._trace import Trace


def parse(document: CompileInput, trace: Trace) -> None:
    policy = document.contract.policy
    trace.add(
        Pass.PARSE,
        Outcome.CHECKED,
        reason=None,
        detail=f"{document.request.decision_type}; policy {policy.name} v{policy.version}",
    )
