"""A LlamaIndex node postprocessor that admits only what a published contract lets through.

    from compiler_adapters.llamaindex import EvidencePostprocessor

    postprocessor = EvidencePostprocessor(bundle=bundle, request=request, directory=directory)
    query_engine = index.as_query_engine(node_postprocessors=[postprocessor])
    postprocessor.last_output.slots    # each proposition's state and reason

Needs `evidence-compiler[llamaindex]` (llama-index-core). docs/distribution.md explains the
mapping from node metadata to candidate fields.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from compiler import CompileOutput, PacketItem
from compiler_adapters._candidates import NEEDS_LIBRARY, Retrieved
from compiler_adapters._contract_filter import ContractFilter

try:
    from llama_index.core.postprocessor.types import BaseNodePostprocessor
    from llama_index.core.schema import NodeWithScore, QueryBundle
except ImportError as missing:
    raise ImportError(
        NEEDS_LIBRARY.format(module=__name__, library="llama-index-core", extra="llamaindex")
    ) from missing


@dataclass(frozen=True)
class AdmittedNodes:
    """The admitted nodes, in the packet's order, and the compile output they came from (a
    refused output admits none)."""

    nodes: list[NodeWithScore]
    output: CompileOutput


class EvidencePostprocessor(BaseNodePostprocessor, ContractFilter):
    """Compiles the retrieved nodes against `bundle`'s contract for `request` and keeps only
    the admitted ones, in the packet's order, each with its retrieval score.

    The settings are `ContractFilter`'s: a field function receives the `NodeWithScore`
    (`lambda n: n.score` makes the retrieval score the relevance), `id` is the node's id and
    `content` its text. Each returned node is a copy whose metadata holds, under
    `metadata_key`, the plan id and what the packet says of it (role, supports, contradicts,
    form rank), left out of the text the LLM and the embedding see. A postprocessor shared
    between threads should call `compile_nodes`, which returns the output with the nodes,
    rather than read `last_output`.

    Raises `UnusableDocuments` naming each node and field that cannot make a candidate.
    """

    @classmethod
    def class_name(cls) -> str:
        return "EvidencePostprocessor"

    def compile_nodes(self, nodes: Sequence[NodeWithScore]) -> AdmittedNodes:
        """The admitted nodes among `nodes` and the compile output."""
        retrieved = [
            Retrieved(item=n, id=n.node.node_id, text=n.node.get_content(), metadata=n.metadata)
            for n in nodes
        ]
        decision = self._decide(retrieved)
        admitted = [
            self._admitted(document.item, item, decision.output)
            for document, item in decision.admitted
        ]
        return AdmittedNodes(admitted, decision.output)

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        return self.compile_nodes(nodes).nodes

    def _admitted(
        self, retrieved: NodeWithScore, item: PacketItem, output: CompileOutput
    ) -> NodeWithScore:
        # A copy: a docstore that hands out its own nodes must not see them change.
        node = retrieved.node.model_copy()
        if item.content != node.get_content():
            node.set_content(item.content)
        node.metadata = self._noted(node.metadata, item, output)
        if (key := self.metadata_key) is not None:
            node.excluded_llm_metadata_keys = [*node.excluded_llm_metadata_keys, key]
            node.excluded_embed_metadata_keys = [*node.excluded_embed_metadata_keys, key]
        return NodeWithScore(node=node, score=retrieved.score)


__all__ = ["AdmittedNodes", "EvidencePostprocessor"]
