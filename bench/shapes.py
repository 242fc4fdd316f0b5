"""The four input shapes that once grew worse than linearly, compiled at a given size.

    .venv/bin/python bench/shapes.py [--size 10000] [--repeat 3]

Every candidate is admitted and the budget holds them all, so every unit is walked:

* one group of n members;
* a `depends_on` chain of n links (each item depends on the one before);
* a `superseded_by` chain of n links (validation walks it for loops);
* n discretionary context items under a budget that takes them all.

For each shape it prints the median validation and compile times and the peak memory so far
(`resource.getrusage`). The target is at most 1 s per shape at 10,000, and never a traceback.
"""

from __future__ import annotations

import argparse
import resource
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from compile_scale import median_seconds as _median  # noqa: E402  (bench/ is sys.path[0])

from compiler import compile_input, load_input  # noqa: E402

TARGET_SECONDS = 1.0


def _candidate(index: int, **extra: Any) -> dict[str, Any]:
    doc = {
        "id": f"c{index:06d}",
        "entity": "E",
        "allowed_roles": ["r"],
        "allowed_purposes": ["p"],
        "evidence_class": "a",
        "supports": ["s"],
        "valid_from": "2025-01-01",
        "tokens": 1,
        "relevance": round((index % 1000) / 1000, 3),
        "content": f"item {index}",
    }
    doc.update(extra)
    return doc


def shape_document(shape: str, size: int) -> dict[str, Any]:
    """A compile input of `size` candidates in the named shape (see the module docstring)."""
    if shape == "group":
        candidates = [_candidate(i, group="g") for i in range(size)]
    elif shape == "depends_on":
        candidates = [_candidate(i, depends_on=[f"c{i - 1:06d}"] if i else []) for i in range(size)]
    elif shape == "superseded_by":
        # Each item names its successor; only the last is in force, so the chain validates
        # and admission rejects all but the last as superseded.
        candidates = [
            _candidate(i, superseded_by=f"c{i + 1:06d}" if i + 1 < size else None)
            for i in range(size)
        ]
    elif shape == "discretionary":
        candidates = [
            _candidate(
                i,
                role="instruction",
                evidence_class="note",
                supports=[],
                requirement="discretionary",
            )
            for i in range(size)
        ]
    else:
        raise ValueError(f"unknown shape {shape!r}")
    return {
        "request": {
            "decision_type": "d",
            "principal": "u",
            "roles": ["r"],
            "purpose": "p",
            "entity": "E",
            "decision_date": "2026-08-30",
            "token_budget": size + 10,
        },
        "contract": {
            "decision_type": "d",
            "version": "1",
            "purposes": ["p"],
            "propositions": [{"key": "s", "accepted_classes": ["a"], "max_items": size}],
        },
        "candidates": candidates,
    }


SHAPES = ("group", "depends_on", "superseded_by", "discretionary")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(
        f"{'shape':>14} {'validate s':>11} {'compile s':>10} {'total s':>8} {'packet':>7} "
        f"{'peak MiB':>9}"
    )
    worst = 0.0
    for shape in SHAPES:
        raw = shape_document(shape, args.size)
        validate = _median(lambda raw=raw: load_input(raw), args.repeat)
        document = load_input(raw)
        compile_ = _median(lambda d=document: compile_input(d).to_json(), args.repeat)
        output = compile_input(document)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        worst = max(worst, validate + compile_)
        print(
            f"{shape:>14} {validate:>11.3f} {compile_:>10.3f} {validate + compile_:>8.3f} "
            f"{len(output.packet):>7} {peak:>9.0f}"
        )
    verdict = "meets" if worst <= TARGET_SECONDS else "MISSES"
    print(
        f"slowest shape at {args.size}: {worst:.3f} s; {verdict} the {TARGET_SECONDS:.0f} s target"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
