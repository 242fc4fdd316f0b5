"""scenarios.compiling: corpus validation, sweeps that keep or let go of models, hashes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compiler import load_input
from scenarios import compiling

ATLAS = json.loads((Path(__file__).parents[2] / "examples" / "atlas.json").read_text())


def test_a_whole_compile_input_imports_as_a_corpus():
    valid = compiling.validate_corpus(ATLAS)
    assert [c["id"] for c in valid.candidates] == [c["id"] for c in ATLAS["candidates"]]
    assert valid.directory["entities"] == ATLAS["directory"]["entities"]


@pytest.mark.parametrize(
    "document, located",
    [
        ([], [(None, "(document)")]),
        ({"candidates": {}}, [(None, "candidates")]),
        ({"candidates": [], "extra": 1}, [(None, "extra")]),
        ({"candidates": [], "directory": {"entities": 3}}, [(None, "directory.entities")]),
        (
            {
                "candidates": [
                    {**ATLAS["candidates"][0], "superseded_by": ATLAS["candidates"][0]["id"]}
                ]
            },
            [(0, "superseded_by")],
        ),
    ],
)
def test_corpus_problems_are_located(document, located):
    with pytest.raises(compiling.CorpusInvalid) as caught:
        compiling.validate_corpus(document)
    assert [(p.index, p.field) for p in caught.value.problems] == located


def test_a_retrievers_pool_imports_as_it_is():
    """References to documents the retriever did not return, and items for every entity, are
    what the compiler accepts, so a corpus may carry them."""
    first = ATLAS["candidates"][0]
    pool = {
        "candidates": [
            {**first, "depends_on": ["not-retrieved"], "superseded_by": "not-retrieved-either"},
            {**first, "id": "policy-for-everyone", "entity": "*"},
        ]
    }
    valid = compiling.validate_corpus(pool)
    assert [c["entity"] for c in valid.candidates] == [first["entity"], "*"]


def test_a_sweep_that_lets_go_of_models_keeps_the_same_results():
    document = load_input(ATLAS)
    kept = compiling.sweep_scenario(document, ["case_note"])
    light = compiling.sweep_scenario(document, ["case_note"], keep_models=False)
    assert kept.base.output_json == "" and light.base.output is not None
    assert [v.name for v in kept.variants] == [v.name for v in light.variants]
    assert json.loads(light.base.output_json) == kept.base.output.to_json()
    for full, lean in zip(kept.variants, light.variants, strict=True):
        # A variant is not serialised: scenarios.replay compiles it again when opened.
        assert lean.document is None and lean.output is None and lean.output_json == ""
        assert (lean.result, lean.plan_id, lean.flips) == (
            str(full.output.result),
            full.output.plan_id or "",
            full.flips,
        )


def test_variant_hashes_name_their_inputs():
    base = compiling.input_sha256(load_input(ATLAS))
    day = {"operator": "shift_days", "args": {"days": 1}}
    assert compiling.variant_sha256(base, day) == compiling.variant_sha256(base, dict(day))
    assert compiling.variant_sha256(base, day) != compiling.variant_sha256(
        base, {"operator": "shift_days", "args": {"days": -1}}
    )
    other = compiling.input_sha256(load_input({**ATLAS, "candidates": ATLAS["candidates"][:2]}))
    assert compiling.variant_sha256(base, day) != compiling.variant_sha256(other, day)


def test_an_input_put_together_from_its_corpus_is_the_text_the_compiler_serialises():
    """A run hashes and stores each base's input; serialising the shared contract and corpus
    once must not change a byte of it, whatever order the corpus keeps its candidates in."""
    candidates = [dict(c) for c in reversed(ATLAS["candidates"])]  # not in id order
    candidates[0]["content"] = 'Révision « ouverte » \u202eok\u202c — 審査 \\ "quoted"'
    corpus = compiling.CorpusModels.build(ATLAS["directory"], candidates)
    contract = load_input(ATLAS).contract
    for request in (ATLAS["request"], {**ATLAS["request"], "principal": "rafael"}):
        document = compiling.scenario_input(request, contract, corpus)
        assert compiling.input_json(document, corpus) == document.model_dump_json()
        assert corpus.is_pool_of(document)
    # A document built from other models is serialised whole.
    other = compiling.scenario_input(
        ATLAS["request"], contract, compiling.CorpusModels.build(ATLAS["directory"], candidates)
    )
    assert not corpus.is_pool_of(other)
    assert compiling.input_json(other, corpus) == other.model_dump_json()
