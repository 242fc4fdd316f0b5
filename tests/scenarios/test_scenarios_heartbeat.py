"""A run whose worker stops (killed mid-run) is requeued and resumes; after two requeues it
fails with the reason. The worker is "killed" by a BaseException, which the run's own error
handling does not catch: the run is left running with the results it had committed, as a
SIGKILL leaves it."""

from __future__ import annotations

import datetime as dt
import io
import json

import pytest
from django.core.management import call_command, get_commands
from django.urls import reverse
from django.utils import timezone

from scenarios import runner, selectors, services, stored_reports
from scenarios.models import SuiteRun
from workers import stopping
from workers.management.commands.db_worker import check_stale_work

pytestmark = pytest.mark.django_db

KEY = "credit.review.continuation"
RESULT_FIELDS = (
    "position",
    "scenario_name",
    "perturbation",
    "input_sha256",
    "result",
    "plan_id",
    "output_json",
    "input_json",
    "slot_states",
    "flips",
    "expectation_failures",
)


class WorkerKilled(BaseException):
    """Stands for SIGKILL: nothing in the run catches it."""


@pytest.fixture
def suite(atlas, owner, corpus, scenario, scenario_fields):
    """Four scenarios, so a run can stop part-way."""
    for day in (1, 2, 3):
        services.scenario_create(
            actor=owner,
            decision_type=atlas,
            corpus=corpus,
            name=f"Maya on day {day}",
            **scenario_fields(decision_date=dt.date(2026, 8, 27 + day)),
        )
    return atlas


@pytest.fixture
def every_scenario_commits(settings):
    settings.SUITE_RUN_HEARTBEAT_SECONDS = 0
    settings.SUITE_RUN_STALE_SECONDS = 60


@pytest.fixture
def kill_worker(monkeypatch):
    """kill(after=N): the worker dies as it starts scenario N + 1 (of any attempt)."""
    compiled = []
    real = runner._scenario_rows

    def kill(*, after: int | None):
        def rows(run, scenario, *args):
            if after is not None and len(compiled) >= after:
                raise WorkerKilled
            compiled.append(scenario.name)
            return real(run, scenario, *args)

        monkeypatch.setattr(runner, "_scenario_rows", rows)
        return compiled

    return kill


def results(run):
    return list(run.results.order_by("position").values(*RESULT_FIELDS))


def stale(run):
    """Time passes: the run's last heartbeat is older than the threshold."""
    SuiteRun.objects.filter(pk=run.pk).update(
        heartbeat_at=timezone.now() - dt.timedelta(seconds=61)
    )


def comparable(summary):
    return {k: v for k, v in summary.items() if k not in ("seconds", "compiles_per_second")}


@pytest.mark.parametrize("tally", ["kept", "from before tallies"])
def test_a_stopped_run_is_requeued_and_resumes_to_the_results_of_an_uninterrupted_run(
    owner, draft, suite, every_scenario_commits, kill_worker, groups_as_counted, tally
):
    uninterrupted = services.run_start(actor=owner, version=draft)

    compiled = kill_worker(after=2)
    run = services.run_start(actor=owner, version=draft)
    run.refresh_from_db()
    assert (run.status, run.done) == ("running", 2)
    assert services.runs_requeue_stale() == []  # its heartbeat is recent: still alive

    [chunk] = run.chunks.all()
    assert chunk.groups["states"]  # committed with the two scenarios' rows
    if tally != "kept":  # a chunk that began before chunks kept tallies
        run.chunks.update(groups={})
    kill_worker(after=None)
    compiled.clear()
    stale(run)
    [requeued] = services.runs_requeue_stale()
    # The immediate backend runs the requeued task at once; it compiled only the rest.
    assert requeued.pk == run.pk and requeued.status == "finished"
    assert (requeued.requeues, requeued.resumed_from) == (1, 2)
    assert compiled == ["Maya on day 2", "Maya on day 3"]
    assert results(requeued) == results(uninterrupted)
    assert comparable(requeued.summary) == comparable(uninterrupted.summary)
    # Groups added up from the tallies, or counted from the rows where a chunk kept none.
    assert groups_as_counted(requeued) and groups_as_counted(uninterrupted)
    assert ("verdicts" in requeued.chunks.get().groups) == (tally == "kept")
    # Its report, put together from the pieces of both attempts' commits.
    assert stored_reports.has_pieces(requeued)
    report = json.loads("".join(selectors.run_report_stream(run=requeued)))
    assert report == selectors.run_report(run=requeued)
    assert report["flips"] == selectors.run_report(run=uninterrupted)["flips"]


def test_a_run_stopped_a_third_time_fails_with_the_reason_on_its_page(
    as_owner, owner, draft, suite, every_scenario_commits, kill_worker
):
    kill_worker(after=0)  # every attempt dies before compiling anything
    run = services.run_start(actor=owner, version=draft)
    page_url = reverse("scenarios:run_detail", kwargs={"key": KEY, "pk": run.pk})
    for requeues in (1, 2):
        stale(run)
        as_owner.get(page_url)  # a page view writes nothing: the workers' check requeues
        run.refresh_from_db()
        assert (run.status, run.requeues) == ("running", requeues - 1)
        check_stale_work()
        page = as_owner.get(page_url).content.decode()
        run.refresh_from_db()
        assert (run.status, run.requeues) == ("running", requeues)
        assert "it was requeued at" in page and f"({requeues} time" in page

    stale(run)
    check_stale_work()
    response = as_owner.get(page_url + "?partial=progress", headers={"HX-Request": "true"})
    run.refresh_from_db()
    assert run.status == "failed" and run.requeues == 2
    assert run.error.startswith("The worker running this run stopped")
    assert "requeued 2 times; it was not requeued again" in run.error
    page = response.content.decode()
    assert response.status_code == 286 and "every 1s" not in page
    assert "The run failed: The worker running this run stopped" in page
    assert list(
        run.version.decision_type.audit_events.filter(action__startswith="run.")
        .order_by("pk")
        .values_list("action", flat=True)
    ) == ["run.started", "run.requeued", "run.requeued", "run.failed"]


def test_a_worker_whose_run_was_requeued_meanwhile_writes_nothing_more(
    owner, draft, suite, every_scenario_commits, monkeypatch
):
    """A worker that was only slow, not dead, must not write over the one now running it."""
    real = runner._scenario_rows
    calls = []

    def rows(run, scenario, *args):
        calls.append(scenario.name)
        if len(calls) == 2:  # someone requeued it while this worker compiled
            SuiteRun.objects.filter(pk=run.pk).update(requeues=1)
        return real(run, scenario, *args)

    monkeypatch.setattr(runner, "_scenario_rows", rows)
    run = services.run_start(actor=owner, version=draft, background=False)
    assert calls == ["Maya asks about Atlas", "Maya on day 1"]
    assert (run.status, run.done, run.error) == ("running", 1, "")
    assert run.results.filter(scenario_name="Maya on day 1").count() == 0


def test_the_command_requeues_stale_runs_and_the_worker_command_is_ours(
    owner, draft, suite, every_scenario_commits, kill_worker
):
    kill_worker(after=1)
    run = services.run_start(actor=owner, version=draft)
    kill_worker(after=None)
    out = io.StringIO()
    call_command("requeue_stale_runs", stdout=out)
    assert out.getvalue() == "No stale runs.\n"
    stale(run)
    call_command("requeue_stale_runs", stdout=out)
    assert f"Run {run.pk}: requeued (1 of 2) after 1 of 4 scenarios" in out.getvalue()
    run.refresh_from_db()
    assert run.status == "finished"
    # `manage.py db_worker` is the workers app's: it recovers stale work as it starts.
    assert get_commands()["db_worker"] == "workers"


@pytest.fixture
def one_queued_chunk(owner, draft, suite, every_scenario_commits, settings):
    """A run of the four scenarios as one chunk, queued (its task goes nowhere)."""
    from django.test.utils import override_settings

    settings.SUITE_RUN_CHUNK_SCENARIOS = 4
    with override_settings(
        TASKS={"default": {"BACKEND": "django.tasks.backends.dummy.DummyBackend"}}
    ):
        run = services.run_start(actor=owner, version=draft)
    [chunk] = run.chunks.all()
    return run, chunk


def stop_during(monkeypatch, name: str, then: type[BaseException] | None = None):
    """The worker is asked to stop (SIGTERM) while it compiles scenario `name`; `then`, if
    given, is raised there too (a second signal: it stops at once)."""
    real = runner._scenario_rows

    def rows(run, scenario, *args):
        if scenario.name == name:
            stopping.request()
            if then is not None:
                raise then
        return real(run, scenario, *args)

    monkeypatch.setattr(runner, "_scenario_rows", rows)


def test_a_worker_asked_to_stop_hands_its_chunk_back_and_another_resumes_it(
    owner, draft, one_queued_chunk, monkeypatch
):
    uninterrupted = services.run_start(actor=owner, version=draft)
    run, chunk = one_queued_chunk
    stop_during(monkeypatch, "Maya on day 1")  # the second scenario
    handed: list[int] = []
    with stopping.handing_back_on_signals():
        runner.chunk_execute(chunk_id=chunk.pk, worker="first", hand_back=handed.append)
    chunk.refresh_from_db()
    run.refresh_from_db()
    # Committed what it compiled, then gave the chunk back with a task for it.
    assert handed == [chunk.pk]
    assert (chunk.status, chunk.done, chunk.claimed_by) == ("queued", 2, "")
    assert (run.status, run.done) == ("running", 2)
    assert run.results.filter(perturbation="").count() == 2
    # Queued, not lost: however old the run's heartbeat, it waits for a worker.
    stale(run)
    assert services.runs_requeue_stale() == []

    monkeypatch.undo()
    runner.chunk_execute(chunk_id=chunk.pk, worker="second")
    run.refresh_from_db()
    assert (run.status, run.requeues, run.done) == ("finished", 0, 4)
    assert results(run) == results(uninterrupted)
    assert comparable(run.summary) == comparable(uninterrupted.summary)


def test_a_worker_stopped_at_once_gives_its_chunk_back_first(
    owner, draft, one_queued_chunk, monkeypatch
):
    run, chunk = one_queued_chunk
    stop_during(monkeypatch, "Maya on day 2", then=SystemExit)  # django-tasks-db's 2nd signal
    handed: list[int] = []
    with pytest.raises(SystemExit), stopping.handing_back_on_signals():
        runner.chunk_execute(chunk_id=chunk.pk, worker="first", hand_back=handed.append)
    chunk.refresh_from_db()
    assert handed == [chunk.pk]
    assert (chunk.status, chunk.done) == ("queued", 2)  # the scenarios committed before


def test_a_killed_worker_leaves_its_chunk_running_for_the_heartbeat(
    owner, draft, one_queued_chunk, kill_worker
):
    run, chunk = one_queued_chunk
    kill_worker(after=1)
    handed: list[int] = []
    with pytest.raises(WorkerKilled):
        runner.chunk_execute(chunk_id=chunk.pk, worker="first", hand_back=handed.append)
    chunk.refresh_from_db()
    assert handed == [] and chunk.status == "running"  # no signal: only the requeue helps
    stale(run)
    assert [r.pk for r in services.runs_requeue_stale()] == [run.pk]
