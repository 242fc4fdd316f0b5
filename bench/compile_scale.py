"""Compile time against pool size, beside a plain relevance sort of the same pool.

    python bench/compile_scale.py [--sizes 1000 10000 100000] [--repeat 5] [--top-k 10]

For each pool: the median time to validate the JSON document into a CompileInput, the median
compile time on the validated input, and in the same run the median time of the baseline a
plain retriever needs (sort the same candidates by relevance, take the top k). The ratio
compile / sort is the figure the compiler is held to (target at 100k: at most 3x).

The pool is synthetic and seeded: a 10-proposition contract, candidates spread over entities,
roles, purposes, classes (accepted, weak and unknown), validity windows and supersession, so
that every admission rule is exercised and about a fifth of the pool is admitted.
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import statistics
import sys
import time
from operator import attrgetter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from compiler import compile_input, load_input  # noqa: E402

TARGET_RATIO = 3.0
PROPOSITIONS = [f"prop_{i}" for i in range(10)]
ACCEPTED = {p: [f"class_{i}", f"class_{i}_alt"] for i, p in enumerate(PROPOSITIONS)}


def make_document(size: int, seed: int = 7) -> dict:
    rng = random.Random(seed)
    decision = dt.date(2026, 8, 30)
    entities = ["ATLAS-IN-01"] + [f"ENT-{i:03d}" for i in range(4)]
    roles = ["credit_analyst", "credit_staff", "financial_crime", "ops"]
    purposes = ["annual_credit_review", "investigation"]
    classes = [c for cs in ACCEPTED.values() for c in cs] + ["case_note", "email", "unknown"]
    candidates = []
    ids = [f"doc-{rng.randrange(10**9):09d}-{i}" for i in range(size)]
    for i in range(size):
        supports = rng.sample(PROPOSITIONS, k=rng.choice([1, 1, 1, 2]))
        start = decision - dt.timedelta(days=rng.randint(-30, 700))
        end = start + dt.timedelta(days=rng.randint(10, 900)) if rng.random() < 0.4 else None
        candidates.append(
            {
                "id": ids[i],
                "entity": rng.choice(entities) if rng.random() < 0.5 else "ATLAS-IN-01",
                "allowed_roles": [rng.choice(roles)],
                "allowed_purposes": [rng.choice(purposes)],
                "denied_roles": ["ops"] if rng.random() < 0.02 else [],
                "evidence_class": rng.choice(classes),
                "supports": supports,
                "contradicts": [rng.choice(PROPOSITIONS)] if rng.random() < 0.01 else [],
                "valid_from": start.isoformat(),
                "valid_to": end.isoformat() if end else None,
                "superseded": rng.random() < 0.05,
                # A few links, so the compile pays for look-ups by id as real pools make it.
                "superseded_by": ids[i - 1] if i and rng.random() < 0.01 else None,
                "depends_on": [ids[i - 1]] if i and rng.random() < 0.01 else [],
                "tokens": rng.randint(20, 400),
                "relevance": round(rng.random(), 3),
                "content": f"Synthetic document {i}.",
            }
        )
    return {
        "request": {
            "decision_type": "credit.review.continuation",
            "principal": "maya",
            "roles": ["credit_analyst"],
            "purpose": "annual_credit_review",
            "entity": "Atlas",
            "decision_date": decision.isoformat(),
            "token_budget": 4000,
        },
        "contract": {
            "decision_type": "credit.review.continuation",
            "version": "bench",
            "purposes": ["annual_credit_review"],
            "propositions": [
                {"key": p, "accepted_classes": ACCEPTED[p], "max_items": 2} for p in PROPOSITIONS
            ],
        },
        "directory": {
            "entities": {"ATLAS-IN-01": ["Atlas"]},
            "role_parents": {"credit_analyst": ["credit_staff"]},
        },
        "candidates": candidates,
    }


def median_seconds(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--top-k", type=int, default=10)
    args = parser.parse_args()

    print(
        f"{'pool':>8} {'validate ms':>12} {'compile ms':>11} {'+JSON ms':>9} {'sort top-k ms':>14} "
        f"{'ratio':>6} {'admitted':>9} {'packet':>7}"
    )
    worst = 0.0
    for size in args.sizes:
        raw = make_document(size)
        validation = median_seconds(lambda raw=raw: load_input(raw), args.repeat)
        document = load_input(raw)
        compile_time = median_seconds(lambda d=document: compile_input(d), args.repeat)
        sort_time = median_seconds(
            lambda d=document: sorted(d.candidates, key=attrgetter("relevance"), reverse=True)[
                : args.top_k
            ],
            args.repeat,
        )
        output = compile_input(document)
        # The trace and rejections are written out when first read; time that separately.
        dump_time = median_seconds(lambda d=document: compile_input(d).to_json(), args.repeat)
        admitted = sum(
            1 for e in output.trace if e["pass"] == "admit" and e["outcome"] == "admitted"
        )
        ratio = compile_time / sort_time
        worst = ratio if size == max(args.sizes) else worst
        print(
            f"{size:>8} {validation * 1e3:>12.1f} {compile_time * 1e3:>11.1f} "
            f"{dump_time * 1e3:>9.1f} "
            f"{sort_time * 1e3:>14.1f} {ratio:>5.2f}x {admitted:>9} {len(output.packet):>7}"
        )
    verdict = "meets" if worst <= TARGET_RATIO else "MISSES"
    print(
        f"largest pool: compile is {worst:.2f}x the plain sort; "
        f"{verdict} the {TARGET_RATIO:.0f}x target"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
