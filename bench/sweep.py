"""Compiles per second of a suite run through the workbench's services, against the bare
compiler on the same inputs, in the same process.

    .venv/bin/python bench/sweep.py [--scenarios 200] [--repeat 3]

The workbench side is `scenarios.services.run_start(..., background=False)`: it reads the
scenarios and corpora from the database, validates them, compiles the base and the standard
perturbation suite of every scenario, hashes every input, and stores every output with its
slot states, flips and expectation failures. The bare side is what a script would do with the
same JSON documents: `load_input` then `compiler.sweep` with the same weak classes.
Both count the same compiles. The target is a ratio of at least 0.9.
It also prints what each side spends outside the compiler's `sweep` (reading, validating,
hashing, storing; the bare side's validating its candidates), as a share of its own sweep,
measured within each attempt: a steadier figure than the ratio, on a noisy machine.

Fair to both sides: the bare documents share one validated `Contract` model, as the
services' compiles share the one the runner validates, so both compilers do the same work
(the compiler hashes a contract once per contract object; a fresh contract in every bare
document made each bare scenario hash it again, about two compiles' worth). Each scenario's
request and corpus stay plain JSON, validated inside the bare side's clock. Both paths are
warmed before the first attempt, the attempts alternate which side goes first, and each
services attempt writes into the same database (the previous attempt's run is deleted outside
the clock).

Django is set up here with a throwaway SQLite database in a temporary directory.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = 0.9


def setup_django(directory: str) -> None:
    sys.path.insert(0, str(ROOT))
    os.environ["DATABASE_URL"] = f"sqlite:///{directory}/bench.sqlite3"
    os.environ["DJANGO_SETTINGS_MODULE"] = "workbench.settings.base"
    os.environ.setdefault("DJANGO_DEBUG", "0")  # no query log
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0, interactive=False)


def build_suite(count: int):
    """The demo's Atlas contract and corpora, and `count` scenarios cycling through its stories,
    each moved by 0-4 days. With nine stories a story and a shift come round again every 45
    scenarios; nothing caches a compile, so a repeated input costs both sides a whole compile."""
    from django.contrib.auth import get_user_model

    from contracts import demo as contracts_demo
    from contracts.selectors import current_version
    from scenarios import demo, services
    from scenarios.models import Scenario

    owner = get_user_model().objects.create_superuser("bench", password="bench-not-secret")
    contracts_demo.create_source_classes(actor=owner)
    decision_type = contracts_demo.create_contract(contracts_demo.ATLAS, owner=owner)
    version = current_version(decision_type=decision_type)
    corpora = {
        spec.name: services.corpus_import(
            actor=owner,
            decision_type=decision_type,
            name=spec.name,
            document={"directory": spec.directory, "candidates": spec.candidates},
        )
        for spec in demo.CORPORA
        if spec.decision_type == demo.ATLAS_KEY
    }
    stories = [s for s in demo.SCENARIOS if s.decision_type == demo.ATLAS_KEY]
    scenarios = []
    for i in range(count):
        story = stories[i % len(stories)]
        request = dict(story.request)
        request["decision_date"] = request["decision_date"] + dt.timedelta(days=(i // 8) % 5)
        scenarios.append(
            Scenario(
                decision_type=decision_type,
                corpus=corpora[story.corpus],
                name=f"{story.name} #{i}",
                position=i,
                expected_slots=story.expected_slots,
                created_by=owner,
                **request,
            )
        )
    Scenario.objects.bulk_create(scenarios)
    return owner, version


def bare_documents(version) -> list[dict]:
    """The same inputs as plain JSON, built before the clock starts, all sharing one validated
    contract model (what the runner does with the version's contract)."""
    from compiler import Contract
    from contracts.documents import compiled_contract, compiler_json
    from scenarios.models import Scenario

    contract = Contract.model_validate(compiler_json(compiled_contract(version)))
    documents = []
    for scenario in Scenario.objects.filter(decision_type=version.decision_type).order_by(
        "position"
    ):
        corpus = scenario.corpus
        documents.append(
            {
                "request": scenario.request_document(),
                "contract": contract,
                "directory": corpus.directory,
                "candidates": [c.data for c in corpus.candidates.order_by("position", "id")],
            }
        )
    return documents


class InSweep:
    """Wall time spent inside the compiler's `sweep` (a side's compiles, perturbations and
    comparisons), so that each attempt can say what the rest of its side cost, as a share of
    its own sweep. That share is measured within one attempt, so the machine's speed drifting
    between attempts moves it far less than it moves the ratio of two attempts."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def wrap(self, function):
        def timed(*args, **kwargs):
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - started

        return timed

    def install(self) -> None:
        """Time both sides' calls: the bare side's (`compiler.sweep`, imported when
        timed) and the services' (`scenarios.compiling.sweep`)."""
        import compiler
        from scenarios import compiling

        compiler.sweep = self.wrap(compiler.sweep)
        compiling.sweep = self.wrap(compiling.sweep)


IN_SWEEP = InSweep()


def time_bare(documents: list[dict], weak: list[str]) -> tuple[int, float, float, float]:
    from compiler import load_input, sweep

    compiles = 0
    IN_SWEEP.seconds = 0.0
    wall, cpu = time.perf_counter(), time.process_time()
    for document in documents:
        report = sweep(load_input(document), weak_classes=weak)
        compiles += 1 + report["totals"]["perturbations"]
    elapsed = time.perf_counter() - wall
    return compiles, elapsed, time.process_time() - cpu, _outside_share(elapsed)


def time_services(owner, version, scenario=None) -> tuple[int, float, float, float]:
    from scenarios import services

    IN_SWEEP.seconds = 0.0
    wall, cpu = time.perf_counter(), time.process_time()
    run = services.run_start(actor=owner, version=version, scenario=scenario, background=False)
    elapsed, cpu_elapsed = time.perf_counter() - wall, time.process_time() - cpu
    assert run.status == "finished", run.error
    compiles = run.summary["compiles"]
    # Outside the clock: every attempt writes into the same database, not one grown by the
    # rows of the attempts before it.
    run.delete()
    return compiles, elapsed, cpu_elapsed, _outside_share(elapsed)


def _outside_share(elapsed: float) -> float:
    """What a side spent outside the compiler's sweep, as a share of the time inside it."""
    inside = IN_SWEEP.seconds
    return (elapsed - inside) / inside if inside else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sweep-bench-") as directory:
        setup_django(directory)
        IN_SWEEP.install()
        from scenarios.services import weak_classes

        owner, version = build_suite(options.scenarios)
        documents = bare_documents(version)
        weak = weak_classes()
        # Warm both paths once: the first services run otherwise pays imports and the ORM's
        # first queries inside its clock.
        time_bare(documents[:8], weak)
        from scenarios.models import Scenario

        for scenario in Scenario.objects.order_by("position")[:8]:
            time_services(owner, version, scenario)
        bare_wall, bare_cpu, service_wall, service_cpu = [], [], [], []
        bare_outside, service_outside = [], []
        compiles = 0
        for attempt in range(1, options.repeat + 1):
            # Alternate which side goes first, so neither always inherits a warm cache.
            first_bare = attempt % 2 == 1
            if first_bare:
                bare = time_bare(documents, weak)
            service = time_services(owner, version)
            if not first_bare:
                bare = time_bare(documents, weak)
            assert bare[0] == service[0], (bare[0], service[0])
            compiles = bare[0]
            bare_wall.append(bare[1])
            bare_cpu.append(bare[2])
            service_wall.append(service[1])
            service_cpu.append(service[2])
            bare_outside.append(bare[3])
            service_outside.append(service[3])
            print(
                f"attempt {attempt}: bare {compiles / bare[1]:8.1f} compiles/s "
                f"({bare[1]:.3f} s)   services {compiles / service[1]:8.1f} "
                f"compiles/s ({service[1]:.3f} s)"
            )
    print(
        f"\n{options.scenarios} scenarios, {compiles} compiles per run (base + standard suite), "
        f"best of {options.repeat}:"
    )
    for label, bare_times, service_times in (
        ("wall clock", bare_wall, service_wall),
        ("process CPU", bare_cpu, service_cpu),
    ):
        bare_rate, service_rate = compiles / min(bare_times), compiles / min(service_times)
        ratio = service_rate / bare_rate
        # Each attempt's own ratio (both sides ran back to back): robust to load drifting.
        per_attempt = sorted(b / s for b, s in zip(bare_times, service_times, strict=True))
        median = statistics.median(per_attempt)
        # The verdict follows the median of the attempts' ratios, which load affects least.
        verdict = "met" if median >= TARGET else "NOT met"
        print(
            f"  {label:<12} bare {bare_rate:8.1f}/s   services {service_rate:8.1f}/s   "
            f"best-of ratio {ratio:.2f}; per attempt {per_attempt[0]:.2f}-{per_attempt[-1]:.2f}, "
            f"median {median:.2f} (target >= {TARGET}: {verdict})"
        )
    print("  (services: read from the database, compiled, hashed, compared and stored)")
    # Both sweeps do the same compiles, so with equal sweeps the ratio is (1 + x) / (1 + y),
    # x and y each side's time outside its sweep as a share of it.
    x, y = statistics.median(bare_outside), statistics.median(service_outside)
    print(
        f"  outside the compiler's sweep, median per attempt: bare {x:.1%} of its sweep, "
        f"services {y:.1%}; with equal sweeps the ratio is {(1 + x) / (1 + y):.2f}, and "
        f"{TARGET} allows the services {(1 + x) / TARGET - 1:.1%}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
