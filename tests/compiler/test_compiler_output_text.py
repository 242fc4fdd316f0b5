"""`output_json_text` writes exactly what `json.dumps(indent=2, ensure_ascii=False)`
writes for `to_json()`: the CLI's output and the oracles' bytes must not move."""

from __future__ import annotations

import json

import pytest
from evidence_factories import candidate, compile_doc, context_item, document

from compiler import compile_input, load_input, output_json_text, sha256_hex


def _reference(out) -> str:
    return json.dumps(out.to_json(), indent=2, ensure_ascii=False)


@pytest.mark.parametrize(
    "doc",
    [
        document(candidate("a"), candidate("b", entity="OTHER"), context_item("c")),
        document(candidate('naïve "quoted" \\ id\t✓', content="ü\n"), token_budget=0),
        document(candidate("a", requirement="mandatory", tokens=5000)),  # refused
        document(),  # nothing to trace per candidate
    ],
    ids=["compiled", "escapes", "refused", "empty"],
)
def test_output_text_is_byte_identical_to_the_standard_encoder(doc):
    out = compile_doc(doc)
    assert output_json_text(out) == _reference(out)


def test_a_contract_hash_belongs_to_its_own_contract_object():
    """The contract's sha256 is remembered for the last contract object hashed (a sweep
    compiles one contract many times); another object, even a copy with one field changed,
    is hashed afresh, and the hash is always the RFC 8785 hash of the contract itself."""
    base = load_input(document(candidate("a")))
    changed = base.model_copy(
        update={"contract": base.contract.model_copy(update={"version": "2"})}
    )
    outputs = [compile_input(d) for d in (base, changed, base, changed)]
    hashes = [o.contract.sha256 for o in outputs]
    expected = [sha256_hex(d.contract.model_dump(mode="json")) for d in (base, changed)]
    assert hashes == expected * 2
    assert expected[0] != expected[1]


def test_a_dump_hands_out_its_own_trace_and_rejection_dicts():
    out = compile_doc(document(candidate("a"), candidate("b", entity="ELSEWHERE")))
    for mode in ("python", "json"):
        dumped = out.model_dump(mode=mode)
        dumped["trace"][0]["pass"] = "changed"
        dumped["rejected"][0]["reason"] = "changed"
    assert out.trace[0]["pass"] != "changed"
    assert out.rejected[0]["reason"] != "changed"
