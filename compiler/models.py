"""The compiler's interchange shapes: frozen pydantic models with the field names of docs/design.md.

The input models (and how a document is validated into them, every problem at once) are in
`input_models`, the output models in `output_models`; both are re-exported here, where callers
import them.
"""

from __future__ import annotations

from compiler.input_models import DEFAULT_ROLE_ORDER, Candidate, CompileInput, Contract, Delegation, Directory, Form, Frozen, Identifier, NeedsDocument, Policy, PolicyRef, Proposition, Request, Score, Source, Tokens
from compiler.output_models import CompileOutput, ContractRef, NormalisedRequest, PacketItem, Refusal, Slot
from compiler.records import Records, Rejection, TraceEntry

__all__ = [
    "DEFAULT_ROLE_ORDER",
    "Candidate",
    "CompileInput",
    "CompileOutput",
    "Contract",
    "ContractRef",
    "Delegation",
    "Directory",
    "Form",
    "Frozen",
    "Identifier",
    "NeedsDocument",
    "NormalisedRequest",
    "PacketItem",
    "Policy",
    "PolicyRef",
    "Proposition",
    "Records",
    "Refusal",
    "Rejection",
    "Request",
    "Score",
    "Slot",
    "Source",
    "Tokens",
    "TraceEntry",
]
