"""`sweep`: compile a base and its perturbations, and judge each variant by its operator's
relation.

An orchestrator, above both of what it drives: the perturbations (`_perturb`) make the
variants, the relations (`_relations`) judge them, and neither imports the other's caller.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from compiler._input import CompileInput
from compiler._output import CompileOutput
from compiler._perturb.arguments import Perturbation
from compiler._perturb.flips import flips, slot_states
from compiler._perturb.suite import standard_suite
from compiler._pipeline import compile_input
from compiler._relations.corpus import corpus_findings
from compiler._relations.expectations import expectation_failures, missing_perturbations
from compiler._relations.registry import judge, label
from compiler._relations.verdicts import SEVERITY, Context, worst


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
