"""What changed between two compilations: slot states, the admitted set, `flips`, and `sweep`,
which compiles a base and its variants and judges each by its operator's relation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from compiler.codes import Pass, Result
from compiler.models import CompileInput, CompileOutput

from compiler.perturb.arguments import Perturbation
from compiler.perturb.suite import standard_suite

REFUSED = "refused"


def slot_states(output: CompileOutput, document: CompileInput | None = None) -> dict[str, str]:
    """Each proposition's visible state; every slot reads `refused` when the compile was (a
    refused output has no slots: without the `document` naming them the result is empty)."""
    if output.result is not Result.COMPILED:
        if document is None:
            return {}
        return {p.key: REFUSED for p in document.contract.propositions}
    return {s.proposition: str(s.state) for s in output.slots}


def admitted_in(output: CompileOutput) -> set[str]:
    return {
        entry["id"]
        for entry in output.trace
        if entry["pass"] == Pass.ADMIT and entry["outcome"] == "admitted" and entry["id"]
    }


def flips(
    base: CompileOutput, variant: CompileOutput, document: CompileInput | None = None
) -> dict[str, Any]:
    """Slots whose state differs between two compilations, and how the admitted set moved.

    The outputs name their own slots; `document` (the base input) is needed only to name the
    slots when both compiles were refused. A refused side reads `refused` for every slot.
    """
    before, after = slot_states(base, document), slot_states(variant, document)
    keys = list(dict.fromkeys([*before, *after]))

    def state(states: dict[str, str], output: CompileOutput, key: str) -> str | None:
        return states.get(key, REFUSED if output.result is not Result.COMPILED else None)

    base_reasons = {s.proposition: str(s.reason) for s in base.slots}
    variant_reasons = {s.proposition: str(s.reason) for s in variant.slots}
    flipped = [
        {
            "proposition": key,
            "base": state(before, base, key),
            "variant": state(after, variant, key),
            "base_reason": base_reasons.get(key),
            "variant_reason": variant_reasons.get(key),
        }
        for key in keys
        if state(before, base, key) != state(after, variant, key)
    ]
    admitted_before, admitted_after = admitted_in(base), admitted_in(variant)
    return {
        "slots": flipped,
        "admitted_added": sorted(admitted_after - admitted_before),
        "admitted_removed": sorted(admitted_before - admitted_after),
        "packet_added": sorted(set(variant.packet_ids) - set(base.packet_ids)),
        "packet_removed": sorted(set(base.packet_ids) - set(variant.packet_ids)),
        "tokens": {"base": base.tokens_used, "variant": variant.tokens_used},
        "result": {"base": str(base.result), "variant": str(variant.result)},
        "refusal": variant.refusal.model_dump(by_alias=True) if variant.refusal else None,
    }


def sweep(
    document: CompileInput,
    perturbations: Sequence[Perturbation] | None = None,
    weak_classes: Iterable[str] = (),
    compile_fn: Callable[[CompileInput], CompileOutput] | None = None,
    *,
    expectations: Iterable[Any] = (),
    tiers: Mapping[str, str] | None = None,
    catalogue: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """Compile the base and every perturbation; report each variant's slots, flips and
    verdicts (`relations.judge`), the variant expectations that fail
    (`relations.VariantExpectation`; a perturbation one names that the suite lacks is run
    too), and the corpus-derived findings (`tiers`: class → authority tier, for their text).
    `catalogue` (class → authority tier number, 1 the most authoritative) is what the contract
    probes judge authority by. `passed` is false on any violation or failed expectation."""
    from compiler.pipeline import compile_input
    from compiler.relations import (
        SEVERITY,
        Context,
        corpus_findings,
        expectation_failures,
        judge,
        label,
        missing_perturbations,
        worst,
    )

    run = compile_fn or compile_input
    weak = tuple(dict.fromkeys(weak_classes))
    expectations = list(expectations)
    base = run(document)
    suite = (
        list(perturbations)
        if perturbations is not None
        else standard_suite(document, weak, base=base, catalogue=catalogue)
    )
    authority = dict(catalogue or {})
    suite += missing_perturbations(suite, expectations)
    rows = []
    for perturbation in suite:
        variant_input = perturbation.apply(document)
        variant = run(variant_input)
        context = Context(document, variant_input, weak, authority)
        verdicts = judge(base, variant, perturbation, context)
        rows.append(
            {
                **perturbation.to_json(),
                "label": label(perturbation, document),
                "result": str(variant.result),
                "slots": slot_states(variant, variant_input),
                "flips": flips(base, variant, document),
                "verdict": worst(verdicts),
                "verdicts": [v.to_json() for v in verdicts],
            }
        )
    failures = expectation_failures(rows, expectations)
    counts = dict.fromkeys(SEVERITY, 0)
    for row in rows:
        for v in row["verdicts"]:
            counts[v["kind"]] += 1
    return {
        "base": {
            "result": str(base.result),
            "plan_id": base.plan_id,
            "slots": slot_states(base, document),
            "refusal": base.refusal.model_dump(by_alias=True) if base.refusal else None,
        },
        "perturbations": rows,
        "expectation_failures": failures,
        "corpus_findings": [
            f.to_json() for f in corpus_findings(document.contract, document.candidates, tiers)
        ],
        "passed": counts["violation"] == 0 and not failures,
        "totals": {
            "perturbations": len(rows),
            "with_flips": sum(1 for r in rows if r["flips"]["slots"]),
            "flipped_slots": sum(len(r["flips"]["slots"]) for r in rows),
            "violations": counts["violation"],
            "findings": counts["finding"],
            "expected": counts["expected"],
            "expectation_failures": len(failures),
        },
    }
