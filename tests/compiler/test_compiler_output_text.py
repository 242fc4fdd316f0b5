"""`CompileOutput.to_json_text` writes exactly what `json.dumps(indent=2, ensure_ascii=False)`
writes for `to_json()`: the CLI's output and the oracles' bytes must not move."""

from __future__ import annotations

import json

import pytest
from evidence_factories import candidate, compile_doc, context_item, document


def _reference(out) -> str:
    return json.dumps(out.to_json(), indent=2, ensure_ascii=False)


@pytest.mark.parametrize(
    "doc",
    [
        document(candidate("a"), candidate("b", entity="OTHER"), context_item("c")),
        document(candidate("naïve \"quoted\" \\ id\t✓", content="ü\n"), token_budget=0),
        document(candidate("a", requirement="mandatory", tokens=5000)),  # refused
        document(),  # nothing to trace per candidate
    ],
    ids=["compiled", "escapes", "refused", "empty"],
)
def test_output_text_is_byte_identical_to_the_standard_encoder(doc):
    out = compile_doc(doc)
    assert out.to_json_text() == _reference(out)
