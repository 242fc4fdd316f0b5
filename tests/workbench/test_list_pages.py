"""Every list pages: the same number of queries at 5 rows as at 60, the next rows on page 2,
links that keep the filters, filters that narrow in the database, a clear answer to a bad
page or filter, and nobody else's rows."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from contracts.models import AuditEvent, ContractVersion
from publishing import tokens
from publishing.models import ReceiptReplay
from scenarios.models import Corpus, CorpusCandidate, Scenario, SuiteRun
from workbench.forms.scenarios import BAD_FILTER
from workbench.views.paging import NOT_A_PAGE, PAGE_SIZE

pytestmark = pytest.mark.django_db

ATLAS = "credit.review.continuation"


def corpus_of(decision_type, owner, name: str = "pool") -> Corpus:
    corpus, _ = Corpus.objects.get_or_create(
        decision_type=decision_type, name=name, defaults={"created_by": owner}
    )
    return corpus


def add_scenarios(decision_type, owner, count: int, *, corpus=None, prefix="scenario", **fields):
    """`count` more scenarios named `{prefix} 000`…, in that order in the suite."""
    corpus = corpus or corpus_of(decision_type, owner)
    start = Scenario.objects.filter(decision_type=decision_type, name__startswith=prefix).count()
    Scenario.objects.bulk_create(
        Scenario(
            decision_type=decision_type,
            corpus=corpus,
            name=f"{prefix} {i:03d}",
            position=i,
            principal="maya",
            roles=["credit_analyst"],
            purpose="annual_credit_review",
            entity="Atlas Industries",
            decision_date=dt.date(2026, 8, 30),
            token_budget=760,
            created_by=owner,
            **({"expected_slots": {"facility_limit": "supported"}} | fields),
        )  # fmt: skip
        for i in range(start, start + count)
    )


def add_corpora(decision_type, owner, count: int, *, archived=False):
    start = Corpus.objects.filter(decision_type=decision_type).count()
    Corpus.objects.bulk_create(
        Corpus(
            decision_type=decision_type,
            name=f"corpus {i:03d}",
            created_by=owner,
            archived_at=dt.datetime(2026, 1, 1, tzinfo=dt.UTC) if archived else None,
            archived_by=owner if archived else None,
        )  # fmt: skip
        for i in range(start, start + count)
    )


def add_candidates(corpus, count: int, *, evidence_class="facility_record"):
    start = corpus.candidates.count()
    CorpusCandidate.objects.bulk_create(
        CorpusCandidate(
            corpus=corpus,
            position=i,
            candidate_id=f"doc-{i:03d}",
            data={"id": f"doc-{i:03d}", "evidence_class": evidence_class, "supports": []},
        )  # fmt: skip
        for i in range(start, start + count)
    )


def add_runs(decision_type, owner, count: int):
    version = decision_type.versions.get(number=1)
    SuiteRun.objects.bulk_create(
        SuiteRun(
            decision_type=decision_type,
            version=version,
            created_by=owner,
            status=SuiteRun.Status.FINISHED,
            total=3,
            done=3,
            summary={"failures": 1, "flipped_slots": 2},
        )  # fmt: skip
        for _ in range(count)
    )


def add_versions(decision_type, owner, count: int):
    """Retired versions after the existing ones (rows, not contracts: the list shows rows)."""
    last = decision_type.versions.order_by("-number").first().number
    ContractVersion.objects.bulk_create(
        ContractVersion(
            decision_type=decision_type,
            number=n,
            created_by=owner,
            status=ContractVersion.Status.RETIRED,
        )  # fmt: skip
        for n in range(last + 1, last + 1 + count)
    )


def add_audit_events(decision_type, owner, count: int):
    version = decision_type.versions.get(number=1)
    AuditEvent.objects.bulk_create(
        AuditEvent(
            actor=owner,
            action="contract.edited",
            decision_type=decision_type,
            version=version,
            summary=f"Change {i}",
            changes={"n": i},
        )  # fmt: skip
        for i in range(count)
    )


def add_tokens(decision_type, owner, count: int):
    for i in range(count):
        tokens.token_create(actor=owner, name=f"service {i}", decision_types=[decision_type])


def suite_url(key: str = ATLAS) -> str:
    return reverse("scenarios:suite", kwargs={"key": key})


LISTS = {
    # name: (how to grow it by n rows, the page that lists it)
    "scenarios": (lambda t, o, n: add_scenarios(t, o, n), lambda t: suite_url()),
    "archived scenarios": (
        lambda t, o, n: add_scenarios(
            t,
            o,
            n,
            prefix="gone",
            archived_at=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
            archived_by=o,
        ),  # fmt: skip
        lambda t: suite_url(),
    ),
    "corpora": (lambda t, o, n: add_corpora(t, o, n), lambda t: suite_url()),
    "archived corpora": (
        lambda t, o, n: add_corpora(t, o, n, archived=True),
        lambda t: suite_url(),
    ),
    "runs": (lambda t, o, n: add_runs(t, o, n), lambda t: suite_url()),
    "candidates": (
        lambda t, o, n: add_candidates(corpus_of(t, o), n),
        lambda t: reverse(
            "scenarios:corpus_detail", kwargs={"key": ATLAS, "pk": corpus_of(t, None).pk}
        ),
    ),
    "versions": (
        lambda t, o, n: add_versions(t, o, n),
        lambda t: reverse("decision_type_versions", kwargs={"key": ATLAS}),
    ),
    "tokens": (lambda t, o, n: add_tokens(t, o, n), lambda t: reverse("token_list")),
    "history": (
        lambda t, o, n: add_audit_events(t, o, n),
        lambda t: reverse("version_detail", kwargs={"key": ATLAS, "number": 1}),
    ),
}


def queries_for(client, url: str) -> tuple[int, str]:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200, response.content.decode()[:500]
    return len(queries), response.content.decode()


@pytest.mark.parametrize("name", LISTS)
def test_a_list_asks_as_many_queries_at_60_rows_as_at_5(as_owner, owner, atlas, name):
    grow, url_of = LISTS[name]
    corpus_of(atlas, owner)
    grow(atlas, owner, 5)
    url = url_of(atlas)
    queries_for(as_owner, url)  # the first request of a process fills Django's caches
    with_five, _ = queries_for(as_owner, url)
    grow(atlas, owner, 55)
    with_sixty, page = queries_for(as_owner, url)
    assert with_sixty == with_five
    assert 'rel="next"' in page  # 60 rows are more than a page: the rest is one link away


def test_page_two_shows_the_next_rows_and_the_links_keep_the_filters(as_owner, owner, atlas):
    add_scenarios(atlas, owner, PAGE_SIZE + 10)
    first = as_owner.get(suite_url(), {"q": "scenario"}).content.decode()
    assert "scenario 000" in first and f"scenario {PAGE_SIZE - 1:03d}" in first
    assert f"scenario {PAGE_SIZE:03d}" not in first
    next_url = re.search(r'href="([^"]+)" rel="next"', first).group(1).replace("&amp;", "&")
    assert "q=scenario" in next_url and "page=2" in next_url
    second = as_owner.get(next_url).content.decode()
    assert f"scenario {PAGE_SIZE:03d}" in second and f"scenario {PAGE_SIZE + 9:03d}" in second
    assert f"scenario {PAGE_SIZE - 1:03d}" not in second
    assert f"{PAGE_SIZE + 1}–{PAGE_SIZE + 10} of {PAGE_SIZE + 10} scenarios" in second


def shown(page: str) -> set[str]:
    return set(re.findall(r"<bdi>((?:scenario|other) \d{3})</bdi>", page))


def test_the_scenario_filters_narrow_the_list(as_owner, owner, atlas):
    add_scenarios(atlas, owner, 3)  # facility_limit: supported
    add_scenarios(
        atlas, owner, 2, prefix="other", corpus=corpus_of(atlas, owner, "second"),
        description="A waiver case", expected_slots={"waiver_valid": "unknown"},
    )  # fmt: skip
    everything = {"scenario 000", "scenario 001", "scenario 002", "other 000", "other 001"}
    assert shown(as_owner.get(suite_url()).content.decode()) == everything
    second = corpus_of(atlas, owner, "second").pk
    cases = [
        ({"q": "OTHER"}, {"other 000", "other 001"}),
        ({"q": "waiver case"}, {"other 000", "other 001"}),  # the description
        ({"q": "scenario 001"}, {"scenario 001"}),
        ({"corpus": second}, {"other 000", "other 001"}),
        ({"proposition": "facility_limit"}, {"scenario 000", "scenario 001", "scenario 002"}),
        ({"verdict": "unknown"}, {"other 000", "other 001"}),
        ({"proposition": "waiver_valid", "verdict": "unknown"}, {"other 000", "other 001"}),
        ({"proposition": "facility_limit", "verdict": "unknown"}, set()),
        ({"q": "scenario", "corpus": second}, set()),
    ]
    for query, expected in cases:
        page = as_owner.get(suite_url(), query).content.decode()
        assert shown(page) == expected, query
        if not expected:
            assert "No scenario matches these filters." in page


def test_the_candidate_filters_narrow_the_list(as_owner, owner, atlas):
    corpus = corpus_of(atlas, owner)
    add_candidates(corpus, 3)
    CorpusCandidate.objects.create(
        corpus=corpus, position=9, candidate_id="note-1",
        data={"id": "note-1", "evidence_class": "case_note", "supports": []},
    )  # fmt: skip
    url = reverse("scenarios:corpus_detail", kwargs={"key": ATLAS, "pk": corpus.pk})

    def ids(query):
        page = as_owner.get(url, query).content.decode()
        return set(re.findall(r"<code>((?:doc|note)-[\d]+)</code>", page))

    assert ids({}) == {"doc-000", "doc-001", "doc-002", "note-1"}
    assert ids({"q": "DOC-00"}) == {"doc-000", "doc-001", "doc-002"}
    assert ids({"evidence_class": "case_note"}) == {"note-1"}


@pytest.mark.parametrize(
    ("query", "status", "says"),
    [
        ("page=abc", 400, "‘page’ must be a whole number; ‘abc’"),
        ("page=0", 400, NOT_A_PAGE.format(name="page", value=0)),
        ("runs_page=-2", 400, NOT_A_PAGE.format(name="runs_page", value=-2)),
        ("verdict=maybe", 400, BAD_FILTER.format(name="verdict", problem="")),
        ("corpus=abc", 400, BAD_FILTER.format(name="corpus", problem="")),
        ("proposition=no_such_fact", 400, BAD_FILTER.format(name="proposition", problem="")),
    ],
)
def test_a_bad_page_or_filter_gets_a_clear_answer(as_owner, owner, atlas, query, status, says):
    add_scenarios(atlas, owner, 3)
    response = as_owner.get(f"{suite_url()}?{query}")
    assert response.status_code == status
    assert says.strip() in response.content.decode()


def test_a_page_past_the_end_is_not_found_as_a_version_past_the_last_is(as_owner, owner, atlas):
    add_scenarios(atlas, owner, 3)
    assert as_owner.get(suite_url(), {"page": 1}).status_code == 200
    assert as_owner.get(suite_url(), {"page": 2}).status_code == 404


def test_a_corpus_of_another_type_is_not_a_filter_value(
    as_owner, owner, other_owner, atlas, refund
):
    add_scenarios(atlas, owner, 2)
    theirs = corpus_of(refund, other_owner, "theirs")
    response = as_owner.get(suite_url(), {"corpus": theirs.pk})
    assert response.status_code == 400
    assert "theirs" not in response.content.decode()


def test_another_teams_rows_are_never_listed(as_owner, owner, other_owner, atlas, refund):
    add_scenarios(atlas, owner, 2)
    add_scenarios(refund, other_owner, 2, prefix="other")
    add_tokens(refund, other_owner, 2)
    add_tokens(atlas, owner, 1)
    assert shown(as_owner.get(suite_url()).content.decode()) == {"scenario 000", "scenario 001"}
    assert as_owner.get(suite_url(refund.key)).status_code == 404
    assert as_owner.get(suite_url(refund.key), {"page": 2}).status_code == 404
    page = as_owner.get(reverse("token_list")).content.decode()
    assert "service 0" in page and page.count("data-token=") == 1


def test_the_index_counts_live_scenarios_and_corpora_each_once(as_owner, owner, atlas):
    add_scenarios(atlas, owner, 3)  # in one corpus, counted once
    add_scenarios(
        atlas, owner, 2, prefix="gone", archived_at=dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    )
    add_corpora(atlas, owner, 2)
    add_corpora(atlas, owner, 1, archived=True)
    page = as_owner.get(reverse("scenarios:index")).content.decode()
    row = re.search(rf"<code>{re.escape(ATLAS)}</code>.*?</tr>", page, re.S).group(0)
    assert re.findall(r"<td>(\d+)</td>", row) == ["3", "3"]


def test_the_runs_section_polls_its_page_of_runs_alone(as_owner, owner, atlas):
    add_scenarios(atlas, owner, 3)
    add_runs(atlas, owner, 25)
    page = as_owner.get(suite_url(), {"runs_page": 2}, headers={"HX-Request": "true"})
    body = page.content.decode()
    assert body.lstrip().startswith('<section class="card" id="runs"')
    assert body.count("runs/") >= 5 and "scenario 000" not in body
    assert "Page 2 of 2 (21–25 of 25 runs)" in body
    assert "Run the whole suite" in body  # the type has scenarios to run


def replay_with_changes(version, count: int):
    """A finished replay of `version` whose report names `count` changed decisions."""
    changed = [
        {"decision_id": f"d-{i:03d}", "changed": True, "flips": [], "added": [], "removed": [],
         "admitted_text": "", "result": None, "problems": [], "errors": []}
        for i in range(count)
    ]  # fmt: skip
    return ReceiptReplay.objects.create(
        version=version, days=30, status=ReceiptReplay.Status.DONE,
        result={"replayed": count + 2, "unchanged": 2, "changed": changed, "refused": 0,
                "refused_examples": []},
    )  # fmt: skip


def test_the_changed_recorded_decisions_page_from_the_stored_report(as_owner, draft):
    url = reverse("version_impact", kwargs={"key": ATLAS, "number": draft.number})
    replay = replay_with_changes(draft, 5)
    queries_for(as_owner, url)
    with_five, page = queries_for(as_owner, url)
    assert "7 decision(s) replayed" in page and "5 would change, 2 would not" in page
    replay.delete()
    replay_with_changes(draft, 25)
    with_twenty_five, page = queries_for(as_owner, url)
    assert with_twenty_five == with_five
    shown = set(re.findall(r'data-decision="(d-\d{3})"', page))
    assert shown == {f"d-{i:03d}" for i in range(20)}
    assert "25 would change" in page
    second = as_owner.get(url, {"decisions_page": 2}).content.decode()
    assert set(re.findall(r'data-decision="(d-\d{3})"', second)) == {
        f"d-{i:03d}" for i in range(20, 25)
    }
    assert "Page 2 of 2 (21–25 of 25 changed decisions)" in second
