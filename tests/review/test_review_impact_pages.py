"""The impact report's page at scale: it prints the report's head and one page of its
scenarios, read from their rows, so its queries and its size do not grow with the suite;
the scenarios page on, and filter, in the database; viewing it writes nothing; and the
report computed in slices across workers is the very report computed in one pass, also when
a worker dies in the middle of a slice."""

from __future__ import annotations

import datetime as dt

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext, override_settings
from django.urls import reverse
from django.utils import timezone

from contracts import services
from contracts.models import (
    ImpactReportChunk,
    ImpactReportHead,
    ImpactScenarioEntry,
    StoredImpactReport,
)
from publishing import impact, review
from publishing.impact import chunks, computing, shown, tasks
from scenarios.models import CorpusCandidate

pytestmark = pytest.mark.django_db

DATABASE_TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
HTMX = {"HX-Request": "true"}
WRITES = ("INSERT", "UPDATE", "DELETE")


class WorkerKilled(BaseException):
    """Stands for SIGKILL: nothing in the report's computation catches it."""


def impact_url(version):
    kwargs = {"key": version.decision_type.key, "number": version.number}
    return reverse("version_impact", kwargs=kwargs)


def fact_04_accepts_case_notes(owner, version):
    """Every wide scenario expects fact_04 unknown; a case note now stands for it."""
    version.refresh_from_db()
    services.accepted_class_add(
        actor=owner,
        proposition=version.propositions.get(key="fact_04"),
        expected_lock_version=version.lock_version,
        class_key="case_note",
    )
    version.refresh_from_db()
    return version


def opened(client, version):
    """The page once the report is stored (the first look asks for it; the immediate
    backend computes it), then again: the queries of that second look, and its body."""
    assert client.get(impact_url(version)).status_code == 200
    with CaptureQueriesContext(connection) as queries:
        response = client.get(impact_url(version))
    assert response.status_code == 200
    return queries, response.content.decode()


def test_the_page_issues_the_same_queries_and_stays_small_whatever_the_suite(
    client, owner, wide_type, monkeypatch
):
    # Both suites past what the page shows of a cause's occurrences and of the findings (a
    # cap of 8 here, to keep the suites small) and past a page of scenarios.
    monkeypatch.setattr(shown, "OCCURRENCES_SHOWN", 8)
    monkeypatch.setattr(shown, "FINDINGS_SHOWN", 8)
    _, small = wide_type(15, key="wide.small")
    _, large = wide_type(30, key="wide.large")
    client.force_login(owner)
    small_queries, small_page = opened(client, fact_04_accepts_case_notes(owner, small))
    large_queries, large_page = opened(client, fact_04_accepts_case_notes(owner, large))

    assert len(large_queries) == len(small_queries), [q["sql"] for q in large_queries]
    for page, count in ((small_page, 15), (large_page, 30)):
        assert page.count('class="scenario"') == impact.ENTRIES_PER_PAGE
        assert f"Scenarios 1–10 of {count}." in page and 'id="scenarios-next"' in page
        assert f"{count} scenario(s), {count} changed" in page  # totals cover them all
    # Twice the suite, the same first page (give or take the digits of its counts).
    assert abs(len(large_page) - len(small_page)) < 1_000
    assert len(large_page) < 200_000


def test_viewing_a_ready_report_writes_nothing_and_reads_no_scenario_nor_its_whole_head(
    client, owner, wide_type, monkeypatch
):
    _, version = wide_type(3)
    client.force_login(owner)
    client.get(impact_url(version))
    hashed = []
    real = impact.inputs._inputs_sha256
    monkeypatch.setattr(
        "publishing.impact.inputs._inputs_sha256", lambda v: hashed.append(v.pk) or real(v)
    )
    queries, _ = opened(client, version)
    writes = [q["sql"] for q in queries if q["sql"].lstrip().upper().startswith(WRITES)]
    # Found by the inputs' aggregates, which the first look recorded on the report.
    assert writes == [] and hashed == []
    # The bounded head is on the report's row; the whole head, its own row, is not read.
    assert not [q for q in queries if ImpactReportHead._meta.db_table in q["sql"]]


def test_the_new_findings_come_when_their_list_is_opened(client, owner, wide_type):
    _, version = wide_type(3)
    version = fact_04_accepts_case_notes(owner, version)
    client.force_login(owner)
    _, page = opened(client, version)
    findings = review.report_for(version).shown_verdicts["findings"]
    assert findings
    # Closed, with the request that brings the list as it opens, and none of it.
    assert 'hx-get="?part=findings"' in page and 'class="verdict-finding"' not in page
    part = client.get(impact_url(version) + "?part=findings", headers=HTMX).content.decode()
    assert part.count('class="verdict-finding"') == len(findings)
    assert "<html" not in part and findings[0]["message"] in part
    # Without JavaScript, the link brings the page with the list open.
    inline = client.get(impact_url(version) + "?findings=1").content.decode()
    assert '<details id="findings" open>' in inline
    assert inline.count('class="verdict-finding"') == len(findings)


def test_the_list_reads_each_entry_without_its_sentences_and_says_the_same(client, demo_versions):
    from django.contrib.auth import get_user_model

    from contracts.models import ContractVersion
    from scenarios import demo

    version = ContractVersion.objects.get(decision_type__key=demo.ATLAS_KEY, number=2)
    client.force_login(get_user_model().objects.get(username="olivia"))
    queries, _ = opened(client, version)
    entries = [q["sql"] for q in queries if ImpactScenarioEntry._meta.db_table in q["sql"]]
    assert entries and all('"entry"' not in sql for sql in entries)
    scenarios = impact_url(version) + "?part=scenarios"
    listed = client.get(scenarios, headers=HTMX).content.decode()
    assert "What changes" in listed and "slot change(s)" in listed
    # The first scenario that changes, with its every compile opened: read whole.
    index = next(
        n
        for n, part in enumerate(listed.split('class="scenario"')[1:], 1)
        if "What changes" in part
    )
    opened_url = f"{scenarios}&page=1&compiles={index}"
    compiles = client.get(opened_url, headers=HTMX).content.decode()
    said = compiles.split(f'id="compiles-{index}" open>')[1].split("</details>")[0]
    assert said.count("<li") >= 1 and "Show every compile" not in said
    # Rows stored before the list's copy was are read whole, and say the same.
    ImpactScenarioEntry.objects.update(listed=None)
    assert client.get(scenarios, headers=HTMX).content.decode() == listed
    assert client.get(opened_url, headers=HTMX).content.decode() == compiles


def shown_report(client, version):
    """The stored report the page shows (it is the only one with the page's fingerprint)."""
    assert client.get(impact_url(version)).status_code == 200
    fingerprint = impact.inputs_fingerprint(version)
    return StoredImpactReport.objects.get(version=version, inputs_fingerprint=fingerprint)


@pytest.mark.parametrize("edit", ["scenario", "candidate"])
def test_an_edited_input_still_makes_the_report_found_by_aggregates_stale(
    client, owner, wide_type, edit
):
    decision_type, version = wide_type(3)
    client.force_login(owner)
    before = shown_report(client, version)
    assert before.inputs_sha256 == impact.inputs_sha256(version)
    if edit == "scenario":
        scenario = decision_type.scenarios.order_by("pk").first()
        scenario.principal = "someone-else"
        scenario.save()
    else:  # an edit counts on the candidate's lock, whatever else it changes
        candidate = CorpusCandidate.objects.filter(corpus__decision_type=decision_type).first()
        candidate.data = {**candidate.data, "content": "changed"}
        candidate.lock_version += 1
        candidate.save()

    after = shown_report(client, version)
    assert after.pk != before.pk and after.inputs_sha256 == impact.inputs_sha256(version)
    assert after.inputs_sha256 != before.inputs_sha256


def test_scenarios_page_on_and_filter_in_the_database(client, owner, wide_type):
    _, version = wide_type(30)
    version = fact_04_accepts_case_notes(owner, version)
    client.force_login(owner)
    client.get(impact_url(version))

    last = client.get(impact_url(version) + "?page=3&part=scenarios", headers=HTMX)
    text = last.content.decode()
    assert last.status_code == 200 and 'id="scenarios"' in text and "<h1>" not in text
    assert 'data-scenario="scenario 020"' in text and 'data-scenario="scenario 029"' in text
    assert 'data-scenario="scenario 019"' not in text and "Scenarios 21–30 of 30." in text
    assert 'id="scenarios-next"' not in text and 'rel="prev"' in text

    about = client.get(impact_url(version) + "?proposition=fact_04&kind=newly_failing")
    assert "Scenarios 1–10 of 30." in about.content.decode()
    untouched = client.get(impact_url(version) + "?proposition=fact_01").content.decode()
    assert 'class="scenario"' not in untouched and "No scenario matches these filters." in (
        untouched
    )
    # Filters the page does not know keep everything; a page past the end shows none.
    assert "of 30." in client.get(impact_url(version) + "?kind=nonsense&page=x").content.decode()


def test_a_viewer_of_another_team_gets_404_on_the_report_and_its_pages(
    client, owner, stranger, wide_type
):
    _, version = wide_type(3)
    client.force_login(owner)
    client.get(impact_url(version))
    client.force_login(stranger)
    assert client.get(impact_url(version)).status_code == 404
    page = client.get(impact_url(version) + "?page=1&part=scenarios", headers=HTMX)
    assert page.status_code == 404 and b"scenario 000" not in page.content


def test_a_report_computed_in_slices_is_the_report_computed_in_one_pass(owner, wide_type, settings):
    settings.IMPACT_REPORT_CHUNK = 4
    _, version = wide_type(10)
    version = fact_04_accepts_case_notes(owner, version)
    stored = review.stored_report(version)  # the immediate backend: each slice's task runs
    assert stored.status == StoredImpactReport.Status.READY
    assert list(stored.chunks.values_list("first", "status")) == [
        (0, "done"), (4, "done"), (8, "done"),
    ]  # fmt: skip
    assert (stored.scenarios_done, stored.scenarios_total) == (10, 10)
    whole = impact.impact_report(version)
    assert stored.report_sha256 == whole.sha256
    report = review.report_for(version)
    assert report.sha256 == whole.sha256 and report.document == whole.document
    assert [s["name"] for s in report.scenarios] == [f"scenario {i:03d}" for i in range(10)]


def drain_queue():
    call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload", verbosity=0)


@pytest.mark.django_db(transaction=True)  # the worker takes its tasks on its own connection
def test_a_worker_killed_mid_slice_is_recovered_and_only_its_slice_done_again(
    client, owner, wide_type, settings, monkeypatch
):
    from django_tasks_db.models import DBTaskResult

    settings.IMPACT_REPORT_CHUNK = 4
    _, version = wide_type(10)
    with override_settings(TASKS=DATABASE_TASKS):
        version = fact_04_accepts_case_notes(owner, version)
        DBTaskResult.objects.all().delete()  # the edit's own requests for the report
        report = computing.report_compute(
            version_id=version.pk, enqueue_chunk=tasks.compute_impact_chunk.enqueue
        )
        first, second, third = report.chunks.order_by("number")
        chunks.chunk_execute(chunk_id=first.pk)

        real = chunks.scenario_entries

        def killed(*args):
            raise WorkerKilled

        monkeypatch.setattr("publishing.impact.chunks.scenario_entries", killed)
        with pytest.raises(WorkerKilled):
            chunks.chunk_execute(chunk_id=second.pk)
        monkeypatch.setattr("publishing.impact.chunks.scenario_entries", real)
        row = StoredImpactReport.objects.get(pk=report.pk)
        assert row.status == StoredImpactReport.Status.COMPUTING
        assert (row.scenarios_done, row.scenarios_total) == (4, 10)
        assert not row.entries.filter(position__gte=4, position__lt=8).exists()  # no half
        # Its progress shows while it is computed.
        client.force_login(owner)
        page = client.get(impact_url(version)).content.decode()
        assert "4 of 10 scenarios compiled." in page and 'hx-trigger="every 2s"' in page

        # The third slice is done by another worker; then nobody beats on the report.
        chunks.chunk_execute(chunk_id=third.pk)
        old = timezone.now() - dt.timedelta(seconds=settings.IMPACT_REPORT_STALE_SECONDS + 1)
        StoredImpactReport.objects.filter(pk=report.pk).update(heartbeat_at=old)
        ImpactReportChunk.objects.filter(pk=second.pk).update(heartbeat_at=old)
        drain_queue()  # a worker starting recovers it, then computes what is left

    row = StoredImpactReport.objects.get(pk=report.pk)
    assert row.status == StoredImpactReport.Status.READY and row.attempts == 2
    claims = dict(row.chunks.values_list("number", "claims"))
    assert claims == {0: 1, 1: 2, 2: 1}  # the done slices were not compiled again
    assert row.report_sha256 == impact.impact_report(version).sha256
