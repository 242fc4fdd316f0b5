"""The test suite's wall time at a baseline commit against the current tree, in the same run.

    python bench/test_suite_time.py [--baseline REF] [--repeat 3] [--workers 2] [PATH ...]

The baseline (default: the merge-base of HEAD with main) is checked out into a temporary git
worktree; both trees run `python -m pytest -q -n WORKERS -p no:cacheprovider PATH ...` with
this Python, from their own folder (so each imports its own code), interleaved (the side that
goes first alternates) and repeated. It prints each run, then each side's median wall time
and median CPU time (pytest and its workers), and the ratios current / baseline. The default
paths are the database-heavy part of the suite: tests/contracts tests/workbench tests/review
tests/scenarios tests/api. DATABASE_URL, if set, is passed on (PostgreSQL).

Wall time on a shared machine is noisy: other processes take CPU from either side at random,
which is why the sides alternate and the medians are compared; the CPU time, which waiting
for a core does not add to, is the steadier figure. A run whose tests fail is reported, and
its time is still counted.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_PATHS = [
    "tests/contracts",
    "tests/workbench",
    "tests/review",
    "tests/scenarios",
    "tests/api",
]


def git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_suite(tree: Path, workers: int, paths: list[str]) -> tuple[float, float, int, str]:
    """Wall seconds the suite took in `tree`, the CPU seconds of pytest and its workers,
    pytest's exit status, and its summary line."""
    command = [sys.executable, "-m", "pytest", "-q", "-n", str(workers), "-p", "no:cacheprovider"]
    start, cpu = time.perf_counter(), _children_cpu()
    done = subprocess.run([*command, *paths], cwd=tree, capture_output=True, text=True)
    seconds, cpu = time.perf_counter() - start, _children_cpu() - cpu
    lines = done.stdout.strip().splitlines()
    return seconds, cpu, done.returncode, lines[-1] if lines else done.stderr.strip()[-300:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", default=DEFAULT_PATHS, help="test paths to time")
    parser.add_argument("--baseline", help="commit to compare with (default: merge-base with main)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per side (default 3)")
    parser.add_argument("--workers", type=int, default=2, help="pytest-xdist workers (default 2)")
    options = parser.parse_args(argv)
    if options.repeat < 1 or options.workers < 1:
        parser.error("--repeat and --workers must be at least 1")

    baseline = options.baseline or git("merge-base", "HEAD", "main")
    commit = git("rev-parse", "--verify", f"{baseline}^{{commit}}")
    times: dict[str, list[float]] = {"baseline": [], "current": []}
    cpu_times: dict[str, list[float]] = {"baseline": [], "current": []}
    with tempfile.TemporaryDirectory(prefix="suite-baseline-") as scratch:
        baseline_tree = Path(scratch) / "tree"
        git("worktree", "add", "--detach", str(baseline_tree), commit)
        try:
            trees = {"baseline": baseline_tree, "current": ROOT}
            print(f"baseline {commit[:12]} against the current tree at {ROOT}")
            print(f"paths: {' '.join(options.paths)}; {options.workers} workers", flush=True)
            for round_ in range(options.repeat):
                order = ["baseline", "current"] if round_ % 2 == 0 else ["current", "baseline"]
                for side in order:
                    seconds, cpu, status, summary = run_suite(
                        trees[side], options.workers, options.paths
                    )
                    times[side].append(seconds)
                    cpu_times[side].append(cpu)
                    failed = "" if status == 0 else f"  (pytest exit status {status})"
                    print(
                        f"  run {round_ + 1} {side:<8} {seconds:7.1f}s wall {cpu:7.1f}s CPU  "
                        f"{summary}{failed}",
                        flush=True,
                    )
        finally:
            git("worktree", "remove", "--force", str(baseline_tree))

    for label, figures in (("wall", times), ("CPU", cpu_times)):
        before, after = (statistics.median(figures[side]) for side in ("baseline", "current"))
        print(
            f"median {label} time: baseline {before:.1f}s, current {after:.1f}s, ratio "
            f"current / baseline {after / before:.2f} ({1 - after / before:.0%} less)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
