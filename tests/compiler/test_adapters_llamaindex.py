"""The LlamaIndex adapter (compiler_adapters.llamaindex), against the real llama-index-core: a
retriever over the Atlas nodes, then the postprocessor keeps only what the packet admits."""

from __future__ import annotations

import pytest
import retrieved_atlas as atlas
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import MetadataMode, NodeWithScore, TextNode

from compiler_adapters import UnusableDocuments
from compiler_adapters.llamaindex import EvidencePostprocessor


class ListRetriever(BaseRetriever):
    """An in-memory index: the same nodes, scored by their relevance, for any query."""

    def __init__(self, nodes: list[TextNode]):
        super().__init__()
        self.nodes = nodes

    def _retrieve(self, query_bundle):
        return [NodeWithScore(node=n, score=n.metadata["relevance"]) for n in self.nodes]


def atlas_nodes() -> list[TextNode]:
    return [TextNode(id_=i, text=text, metadata=meta) for i, text, meta in atlas.retrieved()]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    return atlas.verified_bundle(tmp_path_factory.mktemp("keys"))


def postprocessor(bundle, **options) -> EvidencePostprocessor:
    return EvidencePostprocessor(
        bundle=bundle, request=atlas.REQUEST, directory=atlas.DIRECTORY, **options
    )


def admitted(bundle, nodes=None, **options) -> tuple[list[NodeWithScore], EvidencePostprocessor]:
    found = ListRetriever(atlas_nodes() if nodes is None else nodes).retrieve("covenant waiver")
    processor = postprocessor(bundle, **options)
    return processor.postprocess_nodes(found, query_str="covenant waiver"), processor


def test_only_admitted_nodes_return_in_the_packet_order_with_their_scores(bundle):
    nodes, processor = admitted(bundle)
    assert tuple(n.node.node_id for n in nodes) == atlas.PACKET
    assert [n.score for n in nodes] == [0.78, 0.69, 0.74]
    states = {s.proposition: s.state.value for s in processor.last_output.slots}
    assert states["waiver_valid"] == "unknown"


def test_the_forbidden_high_scorer_is_dropped(bundle):
    found = ListRetriever(atlas_nodes()).retrieve("waiver")
    assert found[0].node.node_id == atlas.FORBIDDEN and found[0].score == 1.0
    nodes = postprocessor(bundle).postprocess_nodes(found)
    assert atlas.FORBIDDEN not in {n.node.node_id for n in nodes}


def test_the_output_is_the_engines_on_the_same_candidates(bundle):
    found = ListRetriever(atlas_nodes()).retrieve("waiver")
    result = postprocessor(bundle).compile_nodes(found)
    assert result.output == atlas.engine_output(bundle)
    assert tuple(n.node.node_id for n in result.nodes) == atlas.PACKET


def test_the_packet_note_stays_out_of_what_the_llm_and_the_embedding_read(bundle):
    originals = atlas_nodes()
    (first, *_), _ = admitted(bundle, originals)
    assert first.node.metadata["evidence"]["supports"] == ["facility_limit"]
    assert "plan_id" not in first.node.get_content(metadata_mode=MetadataMode.LLM)
    assert "plan_id" not in first.node.get_content(metadata_mode=MetadataMode.EMBED)
    assert "evidence" not in next(n for n in originals if n.node_id == first.node.node_id).metadata


def test_the_retrieval_score_can_be_the_relevance(bundle):
    nodes = atlas_nodes()
    for node in nodes:
        del node.metadata["relevance"]
    scores = [1.0, 0.99, 0.96, 0.78, 0.74, 0.69]
    found = [NodeWithScore(node=n, score=s) for n, s in zip(nodes, scores, strict=True)]
    result = postprocessor(bundle, candidate_fields={"relevance": lambda n: n.score}).compile_nodes(
        found
    )
    assert result.output == atlas.engine_output(bundle)


def test_a_node_missing_a_required_field_is_refused_by_name(bundle):
    nodes = atlas_nodes()
    del nodes[4].metadata["valid_from"]
    with pytest.raises(UnusableDocuments) as refused:
        admitted(bundle, nodes)
    (problem,) = refused.value.problems
    assert (problem.position, problem.document_id, problem.field) == (5, "policy-P3", "valid_from")
    assert str(refused.value) == (
        "retrieved documents that cannot be candidates:\n"
        "  document 5 ('policy-P3'): the candidate field 'valid_from' is required and the "
        "document has no metadata 'valid_from'"
    )
