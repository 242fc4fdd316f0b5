"""The seed's three-way comparison, on any input: what a plain retriever would have passed.

* plain top-k: the k most relevant candidates, whatever they are;
* post-filtered top-k: those of them that pass admission;
* compiled: the evidence in the compiled packet.

An item is unsafe when it would fail admission (authorisation, applicability or accepted
class). Coverage counts the contract's propositions that the passed items support or
contradict, as a plain retriever would count them: by what the items claim.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from compiler._candidate_index import CandidateIndex
from compiler._codes import OrderRole, Result
from compiler._errors import Refused
from compiler._input import Candidate, CompileInput
from compiler._passes.admit import admit
from compiler._passes.resolve import resolve
from compiler._passes.typecheck import type_check
from compiler._pipeline import compile_input
from compiler._trace import Trace


def admitted_ids(document: CompileInput) -> set[str]:
    """U for this input, or the empty set when the request itself is refused."""
    trace = Trace()
    candidates = document.candidates_in_id_order()
    by_id = CandidateIndex(candidates)
    try:
        resolution = resolve(document.request, document.directory, trace)
        type_check(document.request, document.contract, trace)
    except Refused:
        return set()
    admission = admit(candidates, by_id, document.request, resolution, document.contract, trace)
    return {c.id for c in admission.admitted}


def metrics(
    items: Iterable[Candidate], universe: set[str], propositions: list[str]
) -> dict[str, Any]:
    items = list(items)
    covered = {p for c in items for p in (*c.supports, *c.contradicts)}
    return {
        "items_passed": len(items),
        "unsafe_items": sum(1 for c in items if c.id not in universe),
        "unsafe_ids": [c.id for c in items if c.id not in universe],
        "coverage_percent": round(100 * len(covered & set(propositions)) / len(propositions))
        if propositions
        else 100,
        "ids": [c.id for c in items],
    }


def compare(document: CompileInput, top_k: int) -> dict[str, dict[str, Any]]:
    if top_k < 1:
        raise ValueError("top_k must be at least 1")
    propositions = [p.key for p in document.contract.propositions]
    universe = admitted_ids(document)
    ranked = sorted(document.candidates, key=lambda c: (-c.relevance, c.id))[:top_k]
    post_filtered = [c for c in ranked if c.id in universe]
    output = compile_input(document)
    by_id = {c.id: c for c in document.candidates}
    compiled = (
        [by_id[i.id] for i in output.packet if i.role is OrderRole.EVIDENCE]
        if output.result is Result.COMPILED
        else []
    )
    return {
        "plain_top_k": metrics(ranked, universe, propositions),
        "post_filter_top_k": metrics(post_filtered, universe, propositions),
        "compiled": metrics(compiled, universe, propositions),
    }
