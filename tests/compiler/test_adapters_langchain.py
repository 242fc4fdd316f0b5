"""The LangChain adapter (compiler_adapters.langchain), against the real langchain-core: a
retriever over the Atlas documents, wrapped, returns only what the packet admits."""

from __future__ import annotations

import asyncio
import json

import pytest
import retrieved_atlas as atlas
from atlas_bundle import ROOT, atlas_bundle, key_set
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever

from compiler_adapters import UnusableDocuments
from compiler_adapters.langchain import EvidenceRetriever


class ListRetriever(BaseRetriever):
    """An in-memory store: the same documents, most relevant first, for any query."""

    documents: list[Document]

    def _get_relevant_documents(self, query, *, run_manager):
        return self.documents


def atlas_documents() -> list[Document]:
    return [Document(id=i, page_content=text, metadata=meta) for i, text, meta in atlas.retrieved()]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    return atlas.verified_bundle(tmp_path_factory.mktemp("keys"))


def evidence_retriever(bundle, documents=None, **options) -> EvidenceRetriever:
    store = ListRetriever(documents=atlas_documents() if documents is None else documents)
    return EvidenceRetriever(
        retriever=store, bundle=bundle, request=atlas.REQUEST, directory=atlas.DIRECTORY, **options
    )


def test_only_admitted_documents_return_in_the_packet_order(bundle):
    retriever = evidence_retriever(bundle)
    documents = retriever.invoke("covenant waiver")
    assert tuple(d.id for d in documents) == atlas.PACKET
    assert [d.page_content for d in documents] == [i.content for i in retriever.last_output.packet]
    states = {s.proposition: s.state.value for s in retriever.last_output.slots}
    assert states == {"facility_limit": "supported", "review_open": "supported",
                      "waiver_valid": "unknown", "continuation_rule": "supported"}  # fmt: skip


def test_the_forbidden_high_scorer_is_dropped_with_its_reason(bundle):
    store = atlas_documents()
    assert store[0].id == atlas.FORBIDDEN  # the retriever ranks it first
    retriever = evidence_retriever(bundle, store)
    assert atlas.FORBIDDEN not in {d.id for d in retriever.invoke("waiver")}
    (rejection,) = [r for r in retriever.last_output.rejected if r["id"] == atlas.FORBIDDEN]
    assert (rejection["reason"], rejection["detail"]) == ("not_authorised", "role")


def test_the_output_is_the_engines_on_the_same_candidates(bundle):
    retriever = evidence_retriever(bundle)
    admitted = retriever.compile_documents(atlas_documents())
    assert admitted.output == atlas.engine_output(bundle)
    assert retriever.last_output == admitted.output
    assert tuple(d.id for d in admitted.documents) == atlas.PACKET


def test_asynchronous_retrieval_admits_the_same(bundle):
    documents = asyncio.run(evidence_retriever(bundle).ainvoke("waiver"))
    assert tuple(d.id for d in documents) == atlas.PACKET


def test_returned_documents_are_copies_carrying_what_the_packet_says(bundle):
    store = atlas_documents()
    (first, *_) = evidence_retriever(bundle, store).invoke("limit")
    assert first.metadata["evidence"]["supports"] == ["facility_limit"]
    assert first.metadata["evidence"]["role"] == "evidence"
    assert first.metadata["evidence"]["plan_id"] == atlas.engine_output(bundle).plan_id
    original = next(d for d in store if d.id == first.id)
    assert "evidence" not in original.metadata
    plain = evidence_retriever(bundle, metadata_key=None).invoke("limit")
    assert "evidence" not in plain[0].metadata


def test_a_document_missing_a_required_field_is_refused_by_name(bundle):
    documents = atlas_documents()
    del documents[3].metadata["evidence_class"]
    documents[4].metadata["tokens"] = "260"
    with pytest.raises(UnusableDocuments) as refused:
        evidence_retriever(bundle, documents).invoke("limit")
    assert [(p.position, p.document_id, p.field) for p in refused.value.problems] == [
        (4, "facility-F102", "evidence_class"),
        (5, "policy-P3", "tokens"),
    ]
    message = str(refused.value)
    assert ("document 4 ('facility-F102'): the candidate field 'evidence_class' is required "
            "and the document has no metadata 'evidence_class'") in message  # fmt: skip
    assert "document 5 ('policy-P3'): the candidate field 'tokens' (metadata 'tokens'):" in message


def test_a_document_without_an_id_is_refused_unless_id_is_mapped(bundle):
    documents = [Document(page_content=d.page_content, metadata={**d.metadata, "doc": d.id})
                 for d in atlas_documents()]  # fmt: skip
    unnamed = (
        "document 1: the candidate field 'id' is required and the document has no id of its own"
    )
    with pytest.raises(UnusableDocuments, match=unnamed + r" \(map 'id' to a metadata key\)"):
        evidence_retriever(bundle, documents).invoke("limit")
    mapped = evidence_retriever(bundle, documents, candidate_fields={"id": "doc"})
    assert [d.metadata["doc"] for d in mapped.invoke("limit")] == list(atlas.PACKET)


def test_fields_map_to_other_keys_and_functions(bundle):
    # A store that keeps only scalar metadata: lists joined with commas, other key names.
    documents = []
    for document in atlas_documents():
        meta = dict(document.metadata)
        meta["kind"] = meta.pop("evidence_class")
        meta["roles"] = ",".join(meta.pop("allowed_roles"))
        documents.append(document.model_copy(update={"metadata": meta}))
    retriever = evidence_retriever(bundle, documents, candidate_fields={
        "evidence_class": "kind",
        "allowed_roles": lambda d: d.metadata["roles"].split(","),
    })  # fmt: skip
    assert tuple(d.id for d in retriever.invoke("limit")) == atlas.PACKET
    assert retriever.last_output == atlas.engine_output(bundle)


def test_the_engines_checks_across_documents_name_the_documents_too(bundle):
    documents = atlas_documents()
    documents.append(documents[3])  # a store that returns one document twice
    with pytest.raises(UnusableDocuments) as refused:
        evidence_retriever(bundle, documents).invoke("limit")
    (problem,) = refused.value.problems
    assert (problem.position, problem.document_id, problem.field) == (7, "facility-F102", "id")
    assert "duplicate candidate id 'facility-F102'" in problem.message


def test_a_failing_field_function_is_refused_by_document_and_field(bundle):
    retriever = evidence_retriever(bundle, candidate_fields={"tokens": lambda d: d.metadata["n"]})
    with pytest.raises(UnusableDocuments, match=(
        "document 1 \\('investigation-X9'\\): the candidate field 'tokens': "
        "its function raised KeyError: 'n'")):  # fmt: skip
        retriever.invoke("limit")


def test_a_refused_decision_admits_nothing(bundle):
    request = {**atlas.REQUEST, "purpose": "marketing"}
    store = ListRetriever(documents=atlas_documents())
    retriever = EvidenceRetriever(
        retriever=store, bundle=bundle, request=request, directory=atlas.DIRECTORY
    )
    assert retriever.invoke("limit") == []
    assert retriever.last_output.refusal.reason == "purpose_not_permitted"


def test_a_request_the_contract_cannot_take_is_refused_when_built(bundle):
    # pydantic carries the engine's message: the problems, each with its location.
    with pytest.raises(ValueError, match="request.token_budget: Input should be greater"):
        evidence_retriever(bundle).__class__(
            retriever=ListRetriever(documents=[]), bundle=bundle,
            request={**atlas.REQUEST, "token_budget": -1},
        )  # fmt: skip
    with pytest.raises(ValueError, match="'evidence_kind' is not a candidate field"):
        evidence_retriever(bundle, candidate_fields={"evidence_kind": "kind"})


def test_the_documented_example_runs(tmp_path, monkeypatch, capsys):
    docs = (ROOT / "docs" / "distribution.md").read_text()
    example = docs.split("### Example", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    (tmp_path / "bundle.json").write_bytes(atlas_bundle())
    key_set(tmp_path)
    monkeypatch.chdir(tmp_path)
    exec(compile(example, "docs/distribution.md", "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    assert printed[:3] == [
        "['facility-F102']",
        "{'facility_limit': 'supported', 'review_open': 'unknown', 'waiver_valid': 'unknown', "
        "'continuation_rule': 'unknown'}",
        "[('investigation-X9', 'not_authorised')]",
    ]
    assert json.loads(printed[3])["supports"] == ["facility_limit"]
