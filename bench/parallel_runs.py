"""Two workers against one on a 1,000-scenario run, on PostgreSQL.

    .venv/bin/python bench/parallel_runs.py [--database-url postgres://postgres@127.0.0.1:5432/bench_parallel]
                                            [--scenarios 1000] [--repeat 3]

A run is split into chunks (`SUITE_RUN_CHUNK_SCENARIOS`), one task each, and every
`manage.py db_worker` claims tasks with `skip_locked`. Each attempt queues a run of the whole
suite and times `db_worker --batch` processes (one, then two, interleaved so load changes on
the machine hit both alike) from their start until the queue is drained and they exit. The
medians and their ratio are printed, with each side's spread, the workers' CPU seconds and the
load average, so a noisy measurement shows as one; the target is two workers in at most 0.6
of one worker's time. The database is dropped and recreated (it must be a scratch database).

Each worker starts in a session of its own, as separately supervised worker processes run
(a process manager's services, containers). Linux's scheduler autogroups share the CPU
between sessions, not processes: on a machine busy with other sessions, two workers started
from one shell session get one session's share between them, and the second worker adds
nothing (each then waits on the run queue twice as long; /proc/PID/schedstat shows it).
`--one-session` starts them in the bench's session, to see that.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = 0.6

SETUP = """
import copy, io
from contracts import demo as contracts_demo
from contracts.models import DecisionType
from scenarios import demo
from scenarios.models import Scenario
contracts_demo.load(io.StringIO())
demo.load(io.StringIO(), queue_runs=False)
atlas = DecisionType.objects.get(key=demo.ATLAS_KEY)
stories = list(atlas.scenarios.all())
copies = []
for i in range({scenarios} - len(stories)):
    s = copy.copy(stories[i % len(stories)])
    s.pk, s.name, s.position = None, f"{{s.name}} #{{i}}", 1000 + i
    copies.append(s)
Scenario.objects.bulk_create(copies)
print(atlas.scenarios.count())
"""

QUEUE = """
from contracts import selectors
from contracts.models import DecisionType
from scenarios import demo, services
atlas = DecisionType.objects.get(key=demo.ATLAS_KEY)
owner = atlas.scenarios.first().created_by
run = services.run_start(actor=owner, version=selectors.current_version(decision_type=atlas))
print(run.pk)
"""

CHECK = """
from scenarios.models import SuiteRun
run = SuiteRun.objects.get(pk={pk})
workers = run.chunks.values("claimed_by").distinct().count()
print(run.status, run.done, run.summary.get("compiles"), "compiles,", workers, "worker(s)")
"""


def manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *args], env=env, capture_output=True, text=True
    )
    if done.returncode:
        sys.exit(f"manage.py {args[0]} failed:\n{done.stderr}")
    return done.stdout


def recreate(url: str) -> None:
    import psycopg

    base, name = url.rsplit("/", 1)
    with psycopg.connect(f"{base}/postgres", autocommit=True) as db:
        db.execute(f'DROP DATABASE IF EXISTS "{name}"')
        db.execute(f'CREATE DATABASE "{name}"')


def drain_queue(
    env: dict[str, str], workers: int, *, one_session: bool = False
) -> tuple[float, float]:
    """Start `workers` `db_worker --batch` processes on the queue and wait for them to empty
    it: the seconds from their start to their exit, and their CPU seconds. Each worker gets a
    session of its own unless `one_session` (the module's docstring says why it matters)."""
    command = [
        sys.executable,
        str(ROOT / "manage.py"),
        "db_worker",
        "--batch",
        "--no-reload",
        "--no-startup-delay",
        "--interval",
        "0",
    ]
    cpu_before = _children_cpu()
    started = time.perf_counter()
    processes = [
        subprocess.Popen(
            command,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=not one_session,
        )
        for _ in range(workers)
    ]
    for process in processes:
        process.wait()
    return time.perf_counter() - started, _children_cpu() - cpu_before


def timed_run(env: dict[str, str], workers: int, one_session: bool) -> tuple[float, float, str]:
    """Seconds from the workers' start to their exit, their CPU seconds, and the run's state."""
    pk = manage(env, "shell", "-c", QUEUE).split()[-1]
    seconds, cpu = drain_queue(env, workers, one_session=one_session)
    return seconds, cpu, manage(env, "shell", "-c", CHECK.format(pk=pk)).strip().splitlines()[-1]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--database-url", default="postgres://postgres@127.0.0.1:5432/bench_parallel"
    )
    parser.add_argument("--scenarios", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--one-session",
        action="store_true",
        help="start the workers in the bench's own session (they then share its CPU share)",
    )
    args = parser.parse_args()
    env = os.environ | {
        "DJANGO_SETTINGS_MODULE": "workbench.settings.dev",
        "DATABASE_URL": args.database_url,
        "DJANGO_DEBUG": "0",  # no query log
        "DJANGO_SECRET_KEY": "bench-" + "x" * 60,  # with DEBUG off, a secret of one's own
    }
    recreate(args.database_url)
    manage(env, "migrate", "--noinput")
    count = manage(env, "shell", "-c", SETUP.format(scenarios=args.scenarios)).split()[-1]
    print("scenarios:", count)
    times: dict[int, list[float]] = {1: [], 2: []}
    ratios = []
    for attempt in range(args.repeat):
        for workers in (1, 2) if attempt % 2 == 0 else (2, 1):
            seconds, cpu, check = timed_run(env, workers, args.one_session)
            times[workers].append(seconds)
            load = os.getloadavg()[0]
            print(
                f"attempt {attempt + 1}: {workers} worker(s) {seconds:6.2f} s, "
                f"CPU {cpu:5.1f} s, load {load:4.1f}  ({check})"
            )
        ratios.append(times[2][-1] / times[1][-1])
    one, two = statistics.median(times[1]), statistics.median(times[2])
    for workers, label in ((1, "one worker"), (2, "two workers")):
        print(
            f"{label}: median {statistics.median(times[workers]):.2f} s, "
            f"{min(times[workers]):.2f}–{max(times[workers]):.2f} s"
        )
    print(
        f"ratio of medians two/one {two / one:.2f} (target <= {TARGET}); per attempt "
        + ", ".join(f"{r:.2f}" for r in ratios)
    )


if __name__ == "__main__":
    main()
