"""A real worker stopped mid-run, and a second worker that finishes the run: killed with
SIGKILL (the run is requeued once its heartbeat is stale), or asked to stop with SIGTERM (it
hands its chunk back at once and exits).

Both are `manage.py db_worker` processes on a SQLite file of their own (the development
settings, so the django-tasks-db queue), with a short heartbeat and staleness threshold. The
file is a copy of one migrated and filled once per test run (`filled_database`); each test
starts its run on its copy, with its own settings.
"""

from __future__ import annotations

import datetime as dt
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from sqlite_files import MANAGE, built_once, copy_database, dev_environment, manage

pytestmark = pytest.mark.long_process

# Three chunks of twenty: a kill lands inside a run that other chunks outlast.
SCENARIOS = 60
CHUNK = "20"
STALE_SECONDS = 1.0

FILL = f"""
import copy, io
from contracts import demo as contracts_demo
from contracts.models import DecisionType
from scenarios import demo, services
from scenarios.models import Scenario
contracts_demo.load(io.StringIO())
demo.load(io.StringIO(), queue_runs=False)
atlas = DecisionType.objects.get(key=demo.ATLAS_KEY)
stories = list(atlas.scenarios.all())
copies = []
for i in range({SCENARIOS} - len(stories)):
    s = copy.copy(stories[i % len(stories)])
    s.pk, s.name, s.position = None, f"{{s.name}} #{{i}}", 1000 + i
    s.token_budget += 1 + i  # a compile input of its own: a run sweeps each copy anew
    copies.append(s)
Scenario.objects.bulk_create(copies)
"""

# Started by each test, under its own settings (the chunk size is read as the run starts).
START_RUN = """
from contracts import selectors
from contracts.models import DecisionType
from scenarios import demo, services
atlas = DecisionType.objects.get(key=demo.ATLAS_KEY)
owner = atlas.scenarios.first().created_by
run = services.run_start(actor=owner, version=selectors.current_version(decision_type=atlas))
print(run.pk)
"""


def wait_for(condition, what: str, timeout: float = 120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"gave up waiting for {what}")


@pytest.fixture
def worker_env() -> dict[str, str]:
    """The workers' settings (a test parametrizes its own)."""
    return {
        "SUITE_RUN_HEARTBEAT_SECONDS": "0.2",
        "SUITE_RUN_STALE_SECONDS": str(STALE_SECONDS),
        "SUITE_RUN_CHUNK_SCENARIOS": CHUNK,
    }


@pytest.fixture(scope="session")
def filled_database(tmp_path_factory, migrated_sqlite) -> Path:
    """The migrated file with the demo and SCENARIOS Atlas stories, once per test run."""

    def fill(path: Path) -> None:
        copy_database(migrated_sqlite, path)
        manage(path, "shell", "-c", FILL)

    return built_once(tmp_path_factory, "worker-kill-filled", fill)


@pytest.fixture
def workspace(tmp_path, worker_env, filled_database):
    copy_database(filled_database, tmp_path / "workbench.sqlite3")
    env = dev_environment(tmp_path / "workbench.sqlite3", **worker_env)
    done = subprocess.run(
        [*MANAGE, "shell", "-c", START_RUN], env=env, check=True, capture_output=True, text=True
    )
    run_pk = int(done.stdout.split()[-1])
    workers = []

    def start_worker(*options: str) -> subprocess.Popen:
        log = open(tmp_path / f"worker-{len(workers)}.log", "w")  # noqa: SIM115
        worker = subprocess.Popen(
            [
                *MANAGE,
                "db_worker",
                "--no-reload",
                "--no-startup-delay",
                "--interval",
                "0.1",
                *options,
            ],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        workers.append((worker, log))
        return worker

    def run_row() -> dict:
        with sqlite3.connect(tmp_path / "workbench.sqlite3", timeout=30) as db:
            db.row_factory = sqlite3.Row
            row = db.execute("SELECT * FROM scenarios_suiterun WHERE id = ?", (run_pk,))
            return dict(row.fetchone())

    def results() -> list[tuple[int, str]]:
        return query(
            "SELECT position, perturbation FROM scenarios_scenarioresult "
            "WHERE run_id = ? ORDER BY position"
        )

    def chunks() -> list[dict]:
        return [
            dict(zip(("number", "status", "done", "count", "claimed_by"), row, strict=True))
            for row in query(
                "SELECT number, status, done, count, claimed_by FROM scenarios_suiterunchunk "
                "WHERE run_id = ? ORDER BY number"
            )
        ]

    def query(sql: str) -> list[tuple]:
        with sqlite3.connect(tmp_path / "workbench.sqlite3", timeout=30) as db:
            return db.execute(sql, (run_pk,)).fetchall()

    start_worker.chunks = chunks  # type: ignore[attr-defined]
    yield start_worker, run_row, results
    for worker, log in workers:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
        log.close()


def pause_inside_a_chunk(worker: subprocess.Popen, start_worker, run_row) -> None:
    """Return once `worker` is paused (SIGSTOP) holding a chunk it has not finished, after its
    first commit.

    Its progress is read while it is paused, so what is read is what a signal sent now finds.
    One caught between two chunks holds nothing, so it is let go on (SIGCONT) and caught
    again: on a fast machine a chunk can finish between a read and a signal."""

    def paused_inside() -> bool:
        worker.send_signal(signal.SIGSTOP)
        holding = any(chunk["status"] == "running" for chunk in start_worker.chunks())
        if holding and run_row()["done"] >= 1:
            return True
        worker.send_signal(signal.SIGCONT)
        return False

    wait_for(paused_inside, "the worker to commit and hold an unfinished chunk")


def kill_first_worker(start_worker, run_row) -> dict:
    """A worker takes the run and is killed (SIGKILL) inside a chunk, after its first commit:
    the run's row as it left it, running."""
    first = start_worker()
    pause_inside_a_chunk(first, start_worker, run_row)
    first.send_signal(signal.SIGKILL)
    first.wait()
    killed = run_row()
    assert killed["status"] == "running" and 1 <= killed["done"] < SCENARIOS
    return killed


def test_a_worker_killed_mid_run_is_replaced_by_one_that_finishes_the_run(workspace):
    start_worker, run_row, results = workspace
    killed = kill_first_worker(start_worker, run_row)

    # The first worker's heartbeat goes stale; a new worker requeues the run as it starts.
    def heartbeat_is_stale() -> bool:
        heartbeat = dt.datetime.fromisoformat(run_row()["heartbeat_at"])
        age = dt.datetime.now(dt.UTC) - heartbeat.replace(tzinfo=dt.UTC)
        return age.total_seconds() > STALE_SECONDS * 1.5

    wait_for(heartbeat_is_stale, "the heartbeat to go stale")
    second = start_worker("--batch")
    assert second.wait(timeout=600) == 0

    finished = run_row()
    assert finished["status"] == "finished", finished["error"]
    assert (finished["requeues"], finished["resumed_from"]) == (1, killed["done"])
    assert finished["done"] == SCENARIOS
    assert_every_compile_stored_once(results(), finished)


# The case: the new worker starts within the staleness window, so its start finds
# nothing stale; its own check, every half second, requeues the run once it goes stale.
@pytest.mark.parametrize(
    "worker_env",
    [
        {
            "SUITE_RUN_HEARTBEAT_SECONDS": "0.2",
            "SUITE_RUN_STALE_SECONDS": "8",
            "STALE_WORK_CHECK_SECONDS": "0.5",
            "SUITE_RUN_CHUNK_SCENARIOS": CHUNK,
        }
    ],
)
def test_a_worker_started_before_the_run_went_stale_requeues_it_while_it_waits(workspace, tmp_path):
    start_worker, run_row, results = workspace
    killed = kill_first_worker(start_worker, run_row)
    second = start_worker()  # at once: the run's heartbeat is still recent

    finished = wait_for(
        lambda: (row := run_row())["status"] in ("finished", "failed") and row,
        "the second worker to requeue and finish the run",
        timeout=300,
    )
    assert second.poll() is None  # still waiting for work: it never had to restart
    assert "No stale work." in (tmp_path / "worker-1.log").read_text()  # not at its start
    assert finished["status"] == "finished", finished["error"]
    # Requeued once; meanwhile the second worker had taken the chunks still queued, so the
    # run resumed from more than the killed worker had done.
    assert finished["requeues"] == 1 and finished["resumed_from"] >= killed["done"]
    assert finished["done"] == SCENARIOS
    assert_every_compile_stored_once(results(), finished)


def assert_every_compile_stored_once(rows: list[tuple[int, str]], run: dict) -> None:
    """Every compile stored once, in order, none lost or repeated across the two workers:
    scenario i's rows are numbered from i * POSITION_STRIDE, its base first."""
    import json

    from scenarios.runner import POSITION_STRIDE

    bases = [position for position, perturbation in rows if perturbation == ""]
    assert bases == [i * POSITION_STRIDE for i in range(SCENARIOS)]
    expected = []
    for base, following in zip(bases, [*bases[1:], None], strict=True):
        count = sum(base <= p and (following is None or p < following) for p, _ in rows)
        expected += range(base, base + count)
    assert [position for position, _ in rows] == expected
    assert json.loads(run["summary"])["compiles"] == len(rows)


# One chunk, so the signal lands in the middle of it; a staleness threshold far beyond the
# test's length, so only the handing back can let the second worker in.
@pytest.mark.parametrize(
    "worker_env",
    [
        {
            "SUITE_RUN_HEARTBEAT_SECONDS": "0.2",
            "SUITE_RUN_STALE_SECONDS": "3600",
            "SUITE_RUN_CHUNK_SCENARIOS": str(SCENARIOS),
        }
    ],
)
def test_a_worker_stopped_with_sigterm_hands_its_chunk_back_and_exits(workspace):
    start_worker, run_row, results = workspace
    first = start_worker()
    pause_inside_a_chunk(first, start_worker, run_row)
    first.send_signal(signal.SIGTERM)  # delivered as it goes on
    first.send_signal(signal.SIGCONT)
    assert first.wait(timeout=10) == 0  # raises TimeoutExpired if it takes longer

    stopped = run_row()
    assert stopped["status"] == "running" and 1 <= stopped["done"] < SCENARIOS
    [chunk] = start_worker.chunks()
    # Handed back: queued again with what it stored, claimable now (not after the heartbeat
    # goes stale, an hour here).
    assert (chunk["status"], chunk["claimed_by"]) == ("queued", "")
    assert chunk["done"] == stopped["done"]

    second = start_worker("--batch")
    assert second.wait(timeout=600) == 0
    finished = run_row()
    assert finished["status"] == "finished", finished["error"]
    assert (finished["requeues"], finished["done"]) == (0, SCENARIOS)  # never requeued
    [chunk] = start_worker.chunks()
    assert (chunk["status"], chunk["done"]) == ("finished", SCENARIOS)
    assert chunk["claimed_by"].endswith(f":{second.pid}")
    assert_every_compile_stored_once(results(), finished)
