"""The context compiler: a pure, deterministic library.

    from compiler import CompileInput, compile_input
    out = compile_input(CompileInput.model_validate(doc))

It imports no Django and reads no clock, network, file or random source outside its CLI.
"""

from __future__ import annotations

from .codes import (
    Detail,
    OrderRole,
    Outcome,
    Pass,
    Reason,
    RefusalReason,
    Requirement,
    Result,
    SlotReason,
    SlotState,
)
from .errors import InvalidInput, Refused
from .loading import load_input
from .models import (
    Candidate,
    CompileInput,
    CompileOutput,
    Contract,
    Delegation,
    Directory,
    Form,
    PacketItem,
    Policy,
    Proposition,
    Request,
    Slot,
)
from .pipeline import compile_input
from .version import COMPILER_VERSION

__all__ = [
    "COMPILER_VERSION",
    "Candidate",
    "CompileInput",
    "CompileOutput",
    "Contract",
    "Delegation",
    "Detail",
    "Directory",
    "Form",
    "InvalidInput",
    "OrderRole",
    "Outcome",
    "PacketItem",
    "Pass",
    "Policy",
    "Proposition",
    "Reason",
    "RefusalReason",
    "Refused",
    "Request",
    "Requirement",
    "Result",
    "Slot",
    "SlotReason",
    "SlotState",
    "compile_input",
    "load_input",
]
