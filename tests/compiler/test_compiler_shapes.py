"""Shapes a document can drive to any size: each compiles at 10,000 with the right output and no
exception (the walks are iterative and linear; how fast is bench/shapes.py's business)."""

from __future__ import annotations

from evidence_factories import candidate, compile_doc, context_item, document

SIZE = 10_000


def _id(i: int) -> str:
    return f"c{i:06d}"


def test_one_group_of_ten_thousand_members_enters_whole():
    doc = document(
        *(candidate(_id(i), group="g", tokens=1) for i in range(SIZE)), token_budget=SIZE
    )
    out = compile_doc(doc)
    assert out.result == "compiled"
    assert len(out.packet) == SIZE and out.tokens_used == SIZE
    assert not list(out.rejected)


def test_one_group_of_ten_thousand_that_does_not_fit_is_left_out_whole():
    doc = document(
        *(candidate(_id(i), group="g", tokens=1) for i in range(SIZE)), token_budget=SIZE - 1
    )
    out = compile_doc(doc)
    assert out.packet == ()
    reasons = {r["id"]: r["reason"] for r in out.rejected}
    assert len(reasons) == SIZE
    assert reasons[_id(0)] == "budget_exceeded"  # the best supporter, offered with its group


def test_a_dependency_chain_of_ten_thousand_links_enters_dependencies_first():
    links = [
        context_item(_id(i), requirement="discretionary", depends_on=[_id(i - 1)] if i else [])
        for i in range(SIZE - 1)
    ]
    head = candidate(_id(SIZE - 1), depends_on=[_id(SIZE - 2)])
    out = compile_doc(document(*links, head, token_budget=SIZE * 100))
    assert out.result == "compiled"
    # The one supporter brings the whole chain, each link after the links it depends on.
    evidence = [i for i in out.to_json()["trace"] if i["reason"] == "support"]
    assert [e["id"] for e in evidence] == [_id(i) for i in range(SIZE)]
    assert len(out.packet) == SIZE


def test_a_dependency_chain_with_a_missing_root_blocks_every_link():
    doc = document(
        candidate(_id(0), entity="ELSEWHERE"),
        *(candidate(_id(i), tokens=1, depends_on=[_id(i - 1)]) for i in range(1, SIZE)),
        token_budget=SIZE,
    )
    out = compile_doc(doc)
    assert out.packet == ()
    reasons = {r["id"]: r["reason"] for r in out.rejected}
    assert reasons[_id(SIZE - 1)] == "dependency_missing"
    assert sum(1 for r in reasons.values() if r == "dependency_missing") == SIZE - 1


def test_a_supersession_chain_of_ten_thousand_links_admits_only_its_end():
    doc = document(
        *(
            candidate(_id(i), superseded_by=_id(i + 1) if i + 1 < SIZE else None)
            for i in range(SIZE)
        )
    )
    out = compile_doc(doc)
    assert out.packet_ids == (_id(SIZE - 1),)
    details = {r["detail"] for r in out.rejected}
    assert details == {"superseded"}


def test_ten_thousand_discretionary_items_under_a_budget_that_takes_them_all():
    doc = document(
        candidate("evidence"),
        *(
            context_item(_id(i), requirement="discretionary", tokens=1, relevance=0.5)
            for i in range(SIZE)
        ),
        token_budget=SIZE + 100,
    )
    out = compile_doc(doc)
    assert len(out.packet) == SIZE + 1
    assert not list(out.rejected)
