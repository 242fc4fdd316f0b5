"""The context compiler: a pure, deterministic library.

    from compiler import CompileInput, compile_input
    out = compile_input(CompileInput.model_validate(doc))

It imports no Django and reads no clock, network, file or random source outside its CLI.
The names below are loaded when first used, so `python -m compiler compile` imports only
what a compile needs (no pydantic for valid input: see `compiler.plain_loading`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from compiler.version import COMPILER_VERSION

if TYPE_CHECKING:
    from compiler.codes import Detail, OrderRole, Outcome, Pass, Reason, RefusalReason, Requirement, Result, SlotReason, SlotState
    from compiler.errors import InvalidInput, Refused
    from compiler.loading import load_input
    from compiler.models import Candidate, CompileInput, CompileOutput, Contract, Delegation, Directory, Form, PacketItem, Policy, Proposition, Request, Slot
    from compiler.pipeline import compile_input
    from compiler.widenings import Widening, contract_widenings

_HOMES = {
    **dict.fromkeys(
        ["Detail", "OrderRole", "Outcome", "Pass", "Reason", "RefusalReason", "Requirement"]
        + ["Result", "SlotReason", "SlotState"],
        "codes",
    ),
    **dict.fromkeys(["InvalidInput", "Refused"], "errors"),
    "load_input": "loading",
    **dict.fromkeys(
        ["Candidate", "CompileInput", "CompileOutput", "Contract", "Delegation", "Directory"]
        + ["Form", "PacketItem", "Policy", "Proposition", "Request", "Slot"],
        "models",
    ),
    "compile_input": "pipeline",
    **dict.fromkeys(["Widening", "contract_widenings"], "widenings"),
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'compiler' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value


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
    "Widening",
    "compile_input",
    "contract_widenings",
    "load_input",
]
