"""The impact report at 2,000 and 10,000 scenarios: its page against the cheapest signed-in
page, and its computation on one worker against two, on PostgreSQL.

    .venv/bin/python bench/impact_report.py [--database-url postgres://postgres@127.0.0.1:5432/bench_impact]
                                            [--sizes 2000 10000] [--requests 30] [--repeat 1]
                                            [--workers 1 2]

Builds, in a scratch database (dropped and recreated), the demo workspace for its catalogue
and, per size, a decision type of its own (not a demo one): eight facts, facility records
standing for the first three and case notes for the next two, and that many scenarios, each
a distinct compile input expecting fact_00 supported and fact_04 unknown; its draft then
accepts case notes for fact_04, so every scenario changes (a newly failing expectation and
a violation of the weak-class probe).

* compute: the draft's report is claimed and cut into slices here (its task's work, which
  queues a task per slice), then `manage.py db_worker --batch` processes, one then two
  (interleaved over `--repeat` attempts, each worker in a session of its own, as
  bench/parallel_runs.py explains), drain the queue: one task per slice of
  `IMPACT_REPORT_CHUNK` scenarios, the last one assembling and hashing the report. Wall
  seconds, the workers' CPU seconds and the ratio of the medians two/one (target: at most
  0.6). `--workers 2` computes with two only (to reach the page sooner on a busy machine).
* page: the impact page and `/new-decision-type/` (the cheapest signed-in page) with
  Django's test client as the owner, `--requests` rounds, interleaved; each page's median,
  p95, the ratio of the medians, its bytes and queries. Target: the impact page of a
  10,000-scenario suite in under a second.

The database server's CPU time is not in the in-process page figures; the load average is
printed, so a noisy measurement shows as one.
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import sys
import time
from pathlib import Path

from parallel_runs import drain_queue, recreate  # bench/ is the script's folder

ROOT = Path(__file__).resolve().parent.parent
PAGE_TARGET_SECONDS = 1.0
RATIO_TARGET = 0.6
FACTS = [f"fact_{i:02d}" for i in range(8)]
CHEAPEST = "/new-decision-type/"


def build(owner, size: int):
    """A decision type of `size` scenarios, its draft changed as the docstring says."""
    import datetime as dt

    from contracts import selectors, services
    from scenarios import services as scenario_services
    from scenarios.models import Scenario

    decision_type = services.decision_type_create(
        actor=owner, key=f"impact.bench{size}", title="Eight facts", purposes=["check"]
    )
    version = selectors.current_version(decision_type=decision_type)
    for fact in FACTS:
        services.proposition_add(
            actor=owner, version=version, expected_lock_version=version.lock_version,
            key=fact, accepted_classes=["facility_record"],
        )  # fmt: skip
        version.refresh_from_db()
    stands = [("facility_record", fact) for fact in FACTS[:3]]
    stands += [("case_note", fact) for fact in FACTS[3:5]]
    candidates = [
        {"id": f"{kind}-{fact}", "entity": "E1", "allowed_roles": ["analyst"],
         "allowed_purposes": ["check"], "evidence_class": kind, "supports": [fact],
         "valid_from": "2026-01-01", "tokens": 10, "relevance": 0.5, "content": f"{kind}."}
        for kind, fact in stands
    ]  # fmt: skip
    corpus = scenario_services.corpus_import(
        actor=owner, decision_type=decision_type, name="bench",
        document={"candidates": candidates},
    )  # fmt: skip
    Scenario.objects.bulk_create(
        (
            Scenario(
                decision_type=decision_type, corpus=corpus, name=f"scenario {i:05d}",
                position=i, principal="ana", roles=["analyst"], purpose="check", entity="E1",
                decision_date=dt.date(2026, 6, 1) + dt.timedelta(days=i % 300),
                token_budget=500 + i, created_by=owner,
                expected_slots={"fact_00": "supported", "fact_04": "unknown"},
            )
            for i in range(size)
        ),
        batch_size=2000,
    )  # fmt: skip
    services.accepted_class_add(
        actor=owner, proposition=version.propositions.get(key="fact_04"),
        expected_lock_version=version.lock_version, class_key="case_note",
    )  # fmt: skip
    version.refresh_from_db()
    return version


def timed_compute(env: dict[str, str], version, workers: int) -> tuple[float, float, str]:
    """The version's report computed from scratch by `workers` workers."""
    from django_tasks_db.models import DBTaskResult

    from contracts.models import StoredImpactReport
    from publishing.impact import computing, tasks

    StoredImpactReport.objects.filter(version=version).delete()
    DBTaskResult.objects.all().delete()
    # The report's own task, here: it claims the report and queues its slices. A `--batch`
    # worker exits on an empty queue, so the slices must be queued before the workers start
    # (long-lived workers would take them as they come).
    started = time.perf_counter()
    computing.report_compute(
        version_id=version.pk, enqueue_chunk=tasks.compute_impact_chunk.enqueue
    )
    planned = time.perf_counter() - started
    seconds, cpu = drain_queue(env, workers)
    seconds += planned
    stored = StoredImpactReport.objects.get(version=version)
    if stored.status != StoredImpactReport.Status.READY:
        sys.exit(f"the report did not finish ({stored.status}: {stored.error})")
    slices = stored.chunks.count()
    return seconds, cpu, f"{stored.scenarios_done} scenarios in {slices} slices"


def timed_pages(client, paths: dict[str, str], requests: int):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    times: dict[str, list[float]] = {name: [] for name in paths}
    sizes: dict[str, int] = {}
    queries: dict[str, int] = {}
    for _ in range(requests):
        for name, path in paths.items():
            with CaptureQueriesContext(connection) as captured:
                begun = time.perf_counter()
                response = client.get(path)
                times[name].append(time.perf_counter() - begun)
            assert response.status_code == 200, (path, response.status_code)
            sizes[name], queries[name] = len(response.content), len(captured)
    return times, sizes, queries


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/bench_impact")
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 10000])
    parser.add_argument("--requests", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument(
        "--workers", type=int, nargs="+", default=[1, 2], help="worker counts to compute with"
    )
    args = parser.parse_args()
    env = os.environ | {
        "DJANGO_SETTINGS_MODULE": "workbench.settings.dev",
        "DATABASE_URL": args.database_url,
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
        "DJANGO_ALLOWED_HOSTS": "testserver",
    }
    os.environ.update(env)
    sys.path[:0] = [str(ROOT)]
    recreate(args.database_url)
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client

    call_command("migrate", verbosity=0, interactive=False)
    call_command("load_demo", verbosity=0)
    owner = get_user_model().objects.create_user("bench-owner", is_superuser=True)
    client = Client()
    client.force_login(owner)
    for size in args.sizes:
        started = time.perf_counter()
        version = build(owner, size)
        print(f"\n{size} scenarios built in {time.perf_counter() - started:.0f} s", flush=True)
        walls: dict[int, list[float]] = {count: [] for count in args.workers}
        rounds = [
            workers
            for attempt in range(args.repeat)
            for workers in (args.workers if attempt % 2 == 0 else args.workers[::-1])
        ]
        for done, workers in enumerate(rounds):
            seconds, cpu, what = timed_compute(env, version, workers)
            walls[workers].append(seconds)
            print(
                f"  compute, {workers} worker(s): {seconds:6.1f} s, workers' CPU {cpu:6.1f} s, "
                f"load {os.getloadavg()[0]:4.1f} ({what})",
                flush=True,
            )
            if done == 0:  # the report is there: its page, before computing it again
                measure_page(client, version, args.requests)
        if walls.get(1) and walls.get(2):
            one, two = statistics.median(walls[1]), statistics.median(walls[2])
            print(f"  compute two/one: {two / one:.2f} (target <= {RATIO_TARGET})")


def measure_page(client, version, requests: int) -> None:
    impact_path = f"/types/{version.decision_type.key}/v{version.number}/impact/"
    paths = {"impact page": impact_path, "cheapest page": CHEAPEST}
    client.get(impact_path)  # warm: the first look in a process reads the templates
    times, sizes, queries = timed_pages(client, paths, requests)
    cheapest = statistics.median(times["cheapest page"])
    for name in paths:
        median = statistics.median(times[name])
        print(
            f"  {name:14} median {median * 1000:7.1f} ms, p95 {p95(times[name]) * 1000:7.1f} "
            f"ms, {median / cheapest:5.1f}x the cheapest, {sizes[name]:>9,} bytes, "
            f"{queries[name]} queries"
        )
    verdict = "ok" if statistics.median(times["impact page"]) < PAGE_TARGET_SECONDS else "over"
    print(f"  impact page under {PAGE_TARGET_SECONDS:.0f} s: {verdict}", flush=True)


if __name__ == "__main__":
    main()
