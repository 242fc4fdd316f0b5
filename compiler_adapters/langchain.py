"""A LangChain retriever that admits only what a published contract lets through.

    from compiler_adapters.langchain import EvidenceRetriever

    retriever = EvidenceRetriever(retriever=vector_store.as_retriever(), bundle=bundle,
                                  request=request, directory=directory)
    documents = retriever.invoke("covenant waiver status")
    retriever.last_output.slots        # each proposition's state and reason

Needs `evidence-compiler[langchain]` (langchain-core). docs/distribution.md explains the
mapping from document metadata to candidate fields.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from compiler import CompileOutput, PacketItem
from compiler_adapters._candidates import NEEDS_LIBRARY, Retrieved
from compiler_adapters._contract_filter import ContractFilter

try:
    from langchain_core.callbacks import (
        AsyncCallbackManagerForRetrieverRun,
        CallbackManagerForRetrieverRun,
    )
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever, RetrieverLike
except ImportError as missing:
    raise ImportError(
        NEEDS_LIBRARY.format(module=__name__, library="langchain-core", extra="langchain")
    ) from missing


@dataclass(frozen=True)
class AdmittedDocuments:
    """The admitted documents, in the packet's order, and the compile output they came from
    (a refused output admits none)."""

    documents: list[Document]
    output: CompileOutput


class EvidenceRetriever(BaseRetriever, ContractFilter):
    """Wraps `retriever`, compiles what it returns against `bundle`'s contract for `request`,
    and returns only the admitted documents, in the packet's order.

    The settings are `ContractFilter`'s: a field function receives the `Document`, `id` is
    `Document.id` and `content` is `page_content`. Each returned document is a copy whose
    metadata holds, under `metadata_key`, the plan id and what the packet says of it (role,
    supports, contradicts, form rank). A retriever shared between threads should call
    `compile_documents`, which returns the output with the documents, rather than read
    `last_output`.

    Raises `UnusableDocuments` naming each document and field that cannot make a candidate.
    """

    retriever: RetrieverLike

    def compile_documents(self, documents: Sequence[Document]) -> AdmittedDocuments:
        """The admitted documents among `documents` and the compile output."""
        retrieved = [
            Retrieved(item=d, id=d.id, text=d.page_content, metadata=d.metadata) for d in documents
        ]
        decision = self._decide(retrieved)
        admitted = [
            self._admitted(document.item, item, decision.output)
            for document, item in decision.admitted
        ]
        return AdmittedDocuments(admitted, decision.output)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        documents = self.retriever.invoke(query, config={"callbacks": run_manager.get_child()})
        return self.compile_documents(documents).documents

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        documents = await self.retriever.ainvoke(
            query, config={"callbacks": run_manager.get_child()}
        )
        return self.compile_documents(documents).documents

    def _admitted(self, document: Document, item: PacketItem, output: CompileOutput) -> Document:
        # A copy: a store that hands out its own objects must not see them change.
        metadata = self._noted(document.metadata, item, output)
        return document.model_copy(update={"page_content": item.content, "metadata": metadata})


__all__ = ["AdmittedDocuments", "EvidenceRetriever"]
