"""What both adapters hold and do: the bundle, the decision request, the candidate mapping,
and the compile of a batch of retrieved documents."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, PrivateAttr, model_validator

from compiler import CompileOutput, PacketItem
from compiler_adapters._candidates import (
    Decision,
    FieldSource,
    Retrieved,
    check_fields,
    decide_documents,
    packet_metadata,
)
from compiler_adapters._deciding import check_request
from compiler_trust import VerifiedBundle


class ContractFilter(BaseModel):
    """`request` is a compile input's request (principal, roles, purpose, entity, decision
    date, token budget), checked against `bundle`'s contract when the adapter is built; one
    adapter serves one decision request, so a service builds one per request (the bundle and
    the wrapped retriever are shared, not copied). `directory` is the compile input's
    directory (entity aliases, role parents), if any. `candidate_fields` maps a candidate
    field to the metadata key it is read from, or to a function of the library's object; an
    unmapped field reads the metadata key of its own name, `id` is the document's own id and
    `content` its text. `metadata_key` names the metadata entry an admitted document's copy
    gains (`None`: none). `last_output` is the latest compile's output."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    bundle: VerifiedBundle
    request: dict[str, Any]
    directory: dict[str, Any] | None = None
    candidate_fields: dict[str, FieldSource] = {}
    metadata_key: str | None = "evidence"

    _last_output: CompileOutput | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _usable(self) -> Self:
        check_fields(self.candidate_fields)
        check_request(self.bundle, self.request, self.directory)
        return self

    @property
    def last_output(self) -> CompileOutput | None:
        return self._last_output

    def _decide(self, retrieved: Sequence[Retrieved]) -> Decision:
        decision = decide_documents(
            self.bundle, self.request, self.directory, retrieved, self.candidate_fields
        )
        self._last_output = decision.output
        return decision

    def _noted(self, metadata: dict[str, Any], item: PacketItem, output: CompileOutput) -> dict:
        """An admitted document's metadata, with what the packet says of it."""
        if self.metadata_key is None:
            return metadata
        return {**metadata, self.metadata_key: packet_metadata(item, output)}


__all__ = ["ContractFilter"]
