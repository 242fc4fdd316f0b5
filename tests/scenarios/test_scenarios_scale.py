"""Scale: the flip matrix's queries do not grow with the suite; a suite whose matrix spans many
pages runs, and its pages together are the whole matrix; the database backend queues a run
that `db_worker` then executes; a run is split into chunks that any number of workers take in
parallel, with the results of a run compiled in one piece."""

from __future__ import annotations

import datetime as dt
import html
import json
import re
import threading

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext, override_settings
from django.urls import reverse

from compiler import PROBE_OPERATORS
from contracts import selectors as contract_selectors
from contracts import services as contract_services
from scenarios import runner, selectors, services
from scenarios.models import ScenarioResult, SuiteRun, SuiteRunChunk
from tests.wide_suite import wide_scenarios

PROPOSITIONS = [f"fact_{i:02d}" for i in range(10)]


@pytest.fixture
def wide(db, owner, catalogue):
    """A decision type with ten propositions and a corpus speaking to each of them."""
    decision_type = contract_services.decision_type_create(
        actor=owner, key="wide.check", title="Ten facts", purposes=["check"]
    )
    version = contract_selectors.current_version(decision_type=decision_type)
    for key in PROPOSITIONS:
        contract_services.proposition_add(
            actor=owner,
            version=version,
            expected_lock_version=version.lock_version,
            key=key,
            description="",
            accepted_classes=["facility_record"],
            required=True,
            max_items=1,
        )
        version.refresh_from_db()
    candidates = [
        {
            "id": f"record-{key}",
            "entity": "E1",
            "allowed_roles": ["analyst"],
            "allowed_purposes": ["check"],
            "evidence_class": "facility_record",
            "supports": [key],
            "valid_from": "2026-01-01",
            "tokens": 10,
            "relevance": 0.5,
            "content": f"Record for {key}.",
        }
        for key in PROPOSITIONS[:3]
    ] + [
        {
            "id": f"note-{key}",
            "entity": "E1",
            "allowed_roles": ["analyst"],
            "allowed_purposes": ["check"],
            "evidence_class": "case_note",
            "supports": [key],
            "valid_from": "2026-01-01",
            "tokens": 10,
            "relevance": 0.9,
            "content": "A note.",
        }
        for key in PROPOSITIONS[3:5]
    ]
    corpus = services.corpus_import(
        actor=owner,
        decision_type=decision_type,
        name="wide",
        document={"candidates": candidates},
    )
    return decision_type, version, corpus


def add_scenarios(decision_type, corpus, owner, count, start=0):
    wide_scenarios(
        decision_type,
        corpus,
        owner,
        range(start, start + count),
        expected_slots=lambda i: (
            {"fact_00": "supported", "fact_09": "unknown"}
            | ({"fact_01": "contradicted"} if i % 7 == 0 else {})
        ),
    )


def matrix_queries(client, decision_type, run, headers=None, **parameters):
    url = reverse("scenarios:run_detail", kwargs={"key": decision_type.key, "pk": run.pk})
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url, parameters, headers=headers)
    assert response.status_code == 200
    return len(queries), response.content.decode()


def row_count(page):
    return page.count('<tr class="base"') + page.count('<tr class="variant"')


# Every row (`show=all`), the default (bases, violations and findings), flips only, and the
# next rows as htmx asks for them (from the eighth scenario's, whose expectations fail).
VIEWS = [
    {"show": "all"},
    {},
    {"flips": "1"},
    {
        "show": "all",
        "after": str(7 * runner.POSITION_STRIDE - 1),
        "partial": "rows",
        "headers": {"HX-Request": "true"},
    },
]


@pytest.mark.parametrize("parameters", VIEWS)
def test_matrix_queries_do_not_grow_with_the_number_of_scenarios(client, owner, wide, parameters):
    decision_type, version, corpus = wide
    client.force_login(owner)
    add_scenarios(decision_type, corpus, owner, 10)
    small = services.run_start(actor=owner, version=version)
    add_scenarios(decision_type, corpus, owner, 40, start=10)
    large = services.run_start(actor=owner, version=version)
    assert large.summary["scenarios"] == 50 and large.summary["failures"] > 0
    matrix_queries(client, decision_type, small, **parameters)  # warm the per-process caches
    small_count, small_page = matrix_queries(client, decision_type, small, **parameters)
    large_count, page = matrix_queries(client, decision_type, large, **parameters)
    # 7: the verdict summary reads the run's variants once more (its own query, so that
    # paging the detail rows leaves it whole); 3 more: a finished run's page is conditional
    # (workbench/conditional.py reads the run, the person's groups and the latest audit event
    # to make its ETag before the view runs).
    assert small_count == large_count <= 10
    # Ten scenarios give more rows than a page holds: both pages hold a page of rows.
    rows = selectors.matrix_page_rows(10)
    assert row_count(small_page) == row_count(page) == rows
    assert page.count('class="cell') == 10 * rows
    assert "expected contradicted" in page and 'class="cell failed' in page


def walk(client, url):
    """Every page of rows, following each page's link to the next."""
    pages = []
    while url:
        page = client.get(url).content.decode()
        pages.append(page)
        found = re.search(r'<a href="([^"]+)" rel="next">', page)
        url = html.unescape(found.group(1)) if found else None
    return pages


# Enough scenarios for a dozen pages of rows, several of them starting inside a scenario; how
# the pages' cost stays flat with the suite's size is the query-count tests' (above) and
# bench/run_pages.py's to show.
WALKED = 40


def test_a_suite_spanning_many_pages_completes_and_its_pages_are_the_whole_matrix(
    client, owner, wide
):
    decision_type, version, corpus = wide
    add_scenarios(decision_type, corpus, owner, WALKED)
    run = services.run_start(actor=owner, version=version)
    assert run.status == "finished" and run.done == run.total == WALKED
    assert run.summary["scenarios"] == WALKED
    assert run.results.count() == run.summary["compiles"] > WALKED * 10
    client.force_login(owner)
    count, page = matrix_queries(client, decision_type, run, show="all")
    assert row_count(page) == selectors.matrix_page_rows(10)
    assert f"<strong>{run.summary['perturbations']}</strong>" in page
    # Every page together is the whole matrix, each row once, in order.
    url = reverse("scenarios:run_detail", kwargs={"key": decision_type.key, "pk": run.pk})
    pages = walk(client, f"{url}?show=all")
    assert len(pages) == -(-run.summary["compiles"] // selectors.matrix_page_rows(10))
    assert len(pages) >= 10
    assert sum(p.count('<tr class="base"') for p in pages) == WALKED
    assert sum(p.count('class="cell') for p in pages) == 10 * run.summary["compiles"]
    assert 'rel="next"' not in pages[-1] and 'rel="first"' in pages[-1]
    # A page that begins inside a scenario names the scenario beside its first perturbation.
    first_rows = [first_row(p) for p in pages[1:]]
    continued = [row for row in first_rows if '<tr class="variant"' in row]
    assert continued and all("<bdi>scenario " in row for row in continued)


def first_row(page):
    return page.split('<table class="matrix"')[1].split("<tbody>")[1].split("</tr>")[0]


def test_the_run_page_does_not_grow_with_the_number_of_scenarios(client, owner, wide):
    """The page opens on the totals and the first rows; the rest come on demand (htmx
    `revealed`, or the pager's links), whatever the size of the run."""
    decision_type, version, corpus = wide
    client.force_login(owner)
    add_scenarios(decision_type, corpus, owner, 5)
    smaller = services.run_start(actor=owner, version=version)
    add_scenarios(decision_type, corpus, owner, 25, start=5)
    larger = services.run_start(actor=owner, version=version)
    _, small_page = matrix_queries(client, decision_type, smaller, show="all")
    _, large_page = matrix_queries(client, decision_type, larger, show="all")
    size = selectors.matrix_page_rows(10)
    assert row_count(small_page) == row_count(large_page) == size
    assert small_page.count('class="cell') == large_page.count('class="cell') == 10 * size
    assert len(large_page) < 1.02 * len(small_page)  # ids and totals have more digits
    # A page a person reads: tens of kilobytes, a few hundred cells.
    assert len(large_page.encode()) < 80_000
    assert f"<strong>{larger.summary['perturbations']}</strong>" in large_page
    # The lazy-loading row fetches the next rows alone, with its own such row.
    url = reverse("scenarios:run_detail", kwargs={"key": decision_type.key, "pk": larger.pk})
    positions = list(larger.results.order_by("position").values_list("position", flat=True))
    last = positions[size - 1]
    assert f'hx-get="{url}?show=all&amp;after={last}&amp;partial=rows"' in large_page
    assert f'<a href="{url}?show=all&amp;after={last}" rel="next">' in large_page
    rows = client.get(f"{url}?show=all&after={last}&partial=rows", headers={"HX-Request": "true"})
    fragment = rows.content.decode()
    assert "<html" not in fragment and "<table" not in fragment and "Verdicts" not in fragment
    assert row_count(fragment) == size
    shown = [int(p) for p in re.findall(r"/results/(\d+)/", fragment)]
    expected = larger.results.filter(position__gt=last).order_by("position")[:size]
    assert list(dict.fromkeys(shown)) == [r.pk for r in expected]
    assert f"after={positions[2 * size - 1]}&amp;partial=rows" in fragment
    end = client.get(
        f"{url}?show=all&after={positions[-3]}&partial=rows", headers={"HX-Request": "true"}
    ).content.decode()
    assert row_count(end) == 2 and "partial=rows" not in end


def test_the_streamed_report_is_the_run_report(client, owner, wide):
    decision_type, version, corpus = wide
    add_scenarios(decision_type, corpus, owner, 30)
    run = services.run_start(actor=owner, version=version)
    client.force_login(owner)
    url = reverse("scenarios:run_report", kwargs={"key": decision_type.key, "pk": run.pk})
    response = client.get(url)
    assert response.streaming
    streamed = json.loads(b"".join(response.streaming_content))
    assert streamed == selectors.run_report(run=run)
    assert streamed["failures"] and streamed["flips"]


@pytest.mark.django_db(transaction=True)
def test_the_database_backend_queues_the_run_for_the_worker(owner, atlas, draft):
    from django_tasks_db.models import DBTaskResult

    from scenarios import demo

    corpus = services.corpus_import(
        actor=owner,
        decision_type=atlas,
        name="atlas",
        document={"directory": demo.ATLAS_DIRECTORY, "candidates": demo.ATLAS_SEED},
    )
    services.scenario_create(
        actor=owner,
        decision_type=atlas,
        corpus=corpus,
        name="seed",
        principal="maya",
        roles=["credit_analyst"],
        purpose="annual_credit_review",
        entity="Atlas",
        decision_date=dt.date(2026, 8, 30),
        token_budget=760,
    )
    with override_settings(TASKS={"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}):
        run = services.run_start(actor=owner, version=draft)
        assert run.status == SuiteRun.Status.QUEUED and run.done == 0
        task = DBTaskResult.objects.get()
        assert task.task_path == "scenarios.tasks.execute_run_chunk"
        assert task.args_kwargs == {"args": [run.chunks.get().pk], "kwargs": {}}
        assert str(task.id) == run.task_id
        call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload", verbosity=0)
    run.refresh_from_db()
    assert run.status == SuiteRun.Status.FINISHED and run.done == 1
    assert DBTaskResult.objects.get().status == "SUCCESSFUL"


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


def results(run):
    return list(run.results.order_by("position").values(*RESULT_FIELDS))


def comparable(summary):
    return {k: v for k, v in summary.items() if k not in ("seconds", "compiles_per_second")}


def test_a_chunked_run_stores_what_a_run_in_one_piece_does(
    settings, owner, wide, groups_as_counted
):
    decision_type, version, corpus = wide
    add_scenarios(decision_type, corpus, owner, 23)
    settings.SUITE_RUN_CHUNK_SCENARIOS = 1000
    whole = services.run_start(actor=owner, version=version)
    settings.SUITE_RUN_CHUNK_SCENARIOS = 5
    chunked = services.run_start(actor=owner, version=version)
    assert whole.chunks.count() == 1
    assert list(chunked.chunks.values_list("first", "count")) == [
        (0, 5),
        (5, 5),
        (10, 5),
        (15, 5),
        (20, 3),
    ]
    assert chunked.status == whole.status == "finished"
    assert chunked.done == chunked.total == 23
    assert results(chunked) == results(whole)
    assert comparable(chunked.summary) == comparable(whole.summary)
    assert chunked.summary["failures"] > 0 and chunked.summary["flipped_slots"] > 0
    # Its groups are the chunks' tallies added up, and the ones its rows give.
    assert all("verdicts" in c.groups for c in chunked.chunks.all())
    assert groups_as_counted(chunked) and groups_as_counted(whole)
    # Its report, put together from the chunks' pieces, is the one-piece run's.
    chunked_report = json.loads("".join(selectors.run_report_stream(run=chunked)))
    whole_report = json.loads("".join(selectors.run_report_stream(run=whole)))
    assert chunked_report["flips"] == whole_report["flips"] and whole_report["flips"]
    assert chunked_report["failures"] == whole_report["failures"]
    assert chunked_report == selectors.run_report(run=chunked)
    assert len(chunked.groups["verdicts"]) > 3 and len(chunked.groups["states"]) > 3
    # The chunk tasks ran in another order: still one run's results, finished once.
    settings.SUITE_RUN_CHUNK_SCENARIOS = 4
    dummy = {"default": {"BACKEND": "django.tasks.backends.dummy.DummyBackend"}}
    with override_settings(TASKS=dummy):
        queued = services.run_start(actor=owner, version=version)
    for chunk in queued.chunks.order_by("-number"):
        runner.chunk_execute(chunk_id=chunk.pk)
    queued.refresh_from_db()
    assert results(queued) == results(whole)
    assert groups_as_counted(queued)
    assert comparable(queued.summary) == comparable(whole.summary)
    assert (
        queued.version.audit_events.filter(action="run.finished", changes__run=queued.pk).count()
        == 1
    )


@pytest.mark.django_db(transaction=True)
def test_two_workers_on_postgresql_complete_a_run_with_every_result_once(
    settings, owner, wide, groups_as_counted
):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (DATABASE_URL=postgres://…): workers claim with skip_locked")
    from django_tasks_db.management.commands.db_worker import Worker

    decision_type, version, corpus = wide
    add_scenarios(decision_type, corpus, owner, 60)
    settings.SUITE_RUN_CHUNK_SCENARIOS = 3
    with override_settings(TASKS={"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}):
        run = services.run_start(actor=owner, version=version)
        assert run.status == "queued" and run.chunks.count() == 20

        def work(name):
            try:
                Worker(
                    queue_names=["default"],
                    interval=0,
                    batch=True,
                    backend_name="default",
                    startup_delay=False,
                    max_tasks=None,
                    worker_id=name,
                    excluded_queue_names=[],
                ).run()
            finally:
                connection.close()

        threads = [threading.Thread(target=work, args=(f"w{i}",)) for i in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
    run.refresh_from_db()
    assert run.status == "finished" and run.done == 60
    positions = list(ScenarioResult.objects.filter(run=run).values_list("position", flat=True))
    assert len(positions) == len(set(positions)) == run.summary["compiles"]
    assert run.results.filter(perturbation="").count() == 60
    assert set(run.chunks.values_list("status", flat=True)) == {SuiteRunChunk.Status.FINISHED}
    claimed_by = set(run.chunks.values_list("claimed_by", flat=True))
    assert claimed_by <= {"w0", "w1"} or all(":" in c for c in claimed_by)
    # The last of twenty chunks, finished by either worker, added up all twenty tallies.
    assert groups_as_counted(run)


def test_coverage_counted_by_the_database_is_the_matrix_s(owner, wide):
    decision_type, version, corpus = wide
    add_scenarios(decision_type, corpus, owner, 12)
    run = services.run_start(actor=owner, version=version)
    full = selectors.flip_matrix(run=run, paged=False)
    counted = selectors.coverage_matrix(run=run)
    assert counted.coverage == full.coverage and counted.never == full.never
    # Every compile counts once per proposition, but the contract probes' (made-up items).
    probes = run.results.filter(perturbation_args__operator__in=sorted(PROBE_OPERATORS)).count()
    assert probes > 0
    assert sum(n for row in counted.coverage for _, n in row["states"]) == (
        10 * (run.summary["compiles"] - probes)
    )
