"""The cost of the verdicts and of the contract probes: the bare compiler's sweep of the demo's
Atlas scenarios with three suites, interleaved in one run:

* `old`: the old standard suite (±1 day, hide, substitute, outsider, revoked delegation,
  contamination; slots and flips, no verdicts);
* `verdicts`: the suite with the failure boundary's perturbations and every verdict, but
  without the contract probes (`compiler._perturb.suite.contract_probes`);
* `probes`: today's whole standard suite (`compiler.sweep`) with the catalogue.

    .venv/bin/python bench/verdicts.py [--scenarios 200] [--repeat 5]

Builds the scenarios as bench/sweep.py does (a throwaway SQLite database). Medians of the
repeats. Targets: verdicts / old at most 2, and probes / verdicts at most 2 (the probes may at
most double the suite's cost).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

from sweep import bare_documents, build_suite, setup_django

TARGET = 2.0
OLD_OPERATORS = frozenset(
    {"shift_days", "hide", "substitute_class", "swap_principal", "revoke_delegation", "contaminate"}
)


SUITES = ("old", "verdicts", "probes")


def time_suite(
    documents: list[dict], weak: list[str], tiers: dict[str, int], suite: str
) -> tuple[int, float]:
    from compiler import (
        PROBE_OPERATORS,
        compile_input,
        flips,
        load_input,
        slot_states,
        standard_suite,
        sweep,
    )

    compiles = 0
    started = time.perf_counter()
    for data in documents:
        document = load_input(data)
        if suite == "probes":
            report = sweep(document, weak_classes=weak, catalogue=tiers)
            compiles += 1 + report["totals"]["perturbations"]
            continue
        if suite == "verdicts":
            # The same sweep with the probes left out; the base is compiled once, as the sweep
            # of the whole suite does.
            base = compile_input(document)
            chosen = [p for p in standard_suite(document, weak, base=base)
                      if p.operator not in PROBE_OPERATORS]  # fmt: skip
            report = sweep(
                document,
                chosen,
                weak,
                lambda d, b=base, d0=document: b if d is d0 else compile_input(d),
            )
            compiles += 1 + report["totals"]["perturbations"]
            continue
        # The sweep as it was: base, old operators, slots and flips, no verdicts.
        base = compile_input(document)
        for p in standard_suite(document, weak, base=base):
            if p.operator in OLD_OPERATORS:
                variant_input = p.apply(document)
                variant = compile_input(variant_input)
                slot_states(variant, variant_input)
                flips(base, variant, document)
                compiles += 1
        compiles += 1
    return compiles, time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="verdicts-bench-") as directory:
        setup_django(directory)
        from scenarios.services import catalogue_tiers, weak_classes

        _, version = build_suite(options.scenarios)
        documents = bare_documents(version)
        weak = weak_classes()
        tiers = catalogue_tiers()
    time_suite(documents[:8], weak, tiers, "probes")  # warm up
    times: dict[str, list[float]] = {suite: [] for suite in SUITES}
    compiles: dict[str, int] = {}
    for attempt in range(options.repeat):
        # Interleaved, each attempt in another order, so drift hits every suite alike.
        order = SUITES[attempt % 3 :] + SUITES[: attempt % 3]
        for suite in order:
            compiles[suite], seconds = time_suite(documents, weak, tiers, suite)
            times[suite].append(seconds)
    median = {suite: statistics.median(values) for suite, values in times.items()}
    print(f"{len(documents)} scenarios, median of {options.repeat}:")
    for suite, words in zip(
        SUITES, ("old standard suite", "with verdicts", "with contract probes"), strict=True
    ):
        print(f"  {words:22s} {compiles[suite]:6d} compiles  {median[suite]:.3f} s")
    verdicts_ratio = median["verdicts"] / median["old"]
    probes_ratio = median["probes"] / median["verdicts"]
    print(f"  verdicts / old     {verdicts_ratio:.2f} (target at most {TARGET})")
    print(f"  probes / verdicts  {probes_ratio:.2f} (target at most {TARGET})")
    return 0 if verdicts_ratio <= TARGET and probes_ratio <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
