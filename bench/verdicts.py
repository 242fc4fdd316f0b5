"""The cost of the failure boundary's perturbations: the bare compiler's sweep of the demo's
Atlas scenarios with the old standard suite (±1 day, hide, substitute, outsider, revoked
delegation, contamination; slots and flips, no verdicts) against today's suite with its
verdicts, expectations and corpus findings (`compiler.perturb.sweep`).

    .venv/bin/python bench/verdicts.py [--scenarios 200] [--repeat 3]

Builds the scenarios as bench/sweep.py does (a throwaway SQLite database); the target is a
ratio of at most 2.
"""

from __future__ import annotations

import argparse
import tempfile
import time

from sweep import bare_documents, build_suite, setup_django

TARGET = 2.0
OLD_OPERATORS = frozenset(
    {"shift_days", "hide", "substitute_class", "swap_principal", "revoke_delegation", "contaminate"}
)


def time_suite(documents: list[dict], weak: list[str], old: bool) -> tuple[int, float]:
    from compiler import compile_input, load_input
    from compiler.perturb import flips, slot_states, standard_suite, sweep

    compiles = 0
    started = time.perf_counter()
    for data in documents:
        document = load_input(data)
        if not old:
            compiles += 1 + sweep(document, weak_classes=weak)["totals"]["perturbations"]
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
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="verdicts-bench-") as directory:
        setup_django(directory)
        from scenarios.services import weak_classes

        _, version = build_suite(options.scenarios)
        documents = bare_documents(version)
        weak = weak_classes()
    time_suite(documents[:8], weak, old=False)  # warm up
    old_times, new_times = [], []
    for attempt in range(options.repeat):
        first_old = attempt % 2 == 0
        runs = [(True, old_times), (False, new_times)]
        for old, times in runs if first_old else reversed(runs):
            compiles, seconds = time_suite(documents, weak, old)
            times.append((compiles, seconds))
    (old_compiles, old_best), (new_compiles, new_best) = (
        (times[0][0], min(s for _, s in times)) for times in (old_times, new_times)
    )
    ratio = new_best / old_best
    print(f"{len(documents)} scenarios, best of {options.repeat}:")
    print(f"  old standard suite     {old_compiles:6d} compiles  {old_best:.3f} s")
    print(f"  suite with verdicts    {new_compiles:6d} compiles  {new_best:.3f} s")
    print(f"  ratio {ratio:.2f} (target at most {TARGET})")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
