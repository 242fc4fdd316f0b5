"""Views: pages, htmx partials, no-JavaScript fallbacks, and permission checks."""

from __future__ import annotations

import json
from html import escape

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from scenarios import selectors, services
from scenarios.models import Corpus, Scenario, SuiteRun
from workbench.views import scenarios as views

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}
KEY = "credit.review.continuation"


def url(name, **kwargs):
    return reverse(f"scenarios:{name}", kwargs=kwargs)


def test_index_and_suite_pages(as_owner, scenario, corpus):
    page = as_owner.get(url("index")).content.decode()
    assert KEY in page
    page = as_owner.get(url("suite", key=KEY)).content.decode()
    assert scenario.name in page and "Import a corpus" in page and "Run the whole suite" in page


def test_import_a_file_in_the_browser(as_owner, atlas, atlas_document):
    upload = SimpleUploadedFile("atlas.json", json.dumps(atlas_document).encode())
    response = as_owner.post(url("corpus_import", key=KEY), {"name": "seed", "file": upload})
    corpus = Corpus.objects.get(name="seed")
    assert response.status_code == 302
    assert response["Location"] == url("corpus_detail", key=KEY, pk=corpus.pk)
    assert corpus.candidates.count() == 6


def test_import_lists_every_problem_and_saves_nothing(as_owner, atlas, atlas_document):
    atlas_document["candidates"][2]["tokens"] = "many"
    atlas_document["candidates"][4]["valid_from"] = "yesterday"
    response = as_owner.post(
        url("corpus_import", key=KEY), {"name": "bad", "text": json.dumps(atlas_document)}
    )
    assert response.status_code == 422
    page = response.content.decode()
    assert "2 problems; nothing was saved." in page
    assert escape("candidates[2] (id 'policy-P3')") in page and "valid_from" in page
    assert escape("candidates[4] (id 'rm-note-N7')") in page
    assert not Corpus.objects.exists()
    response = as_owner.post(url("corpus_import", key=KEY), {"name": "x", "text": "{nope"})
    page = response.content.decode()
    assert response.status_code == 422 and "This cannot be imported: not valid JSON" in page


def test_import_partial_for_htmx(as_owner, atlas):
    response = as_owner.post(
        url("corpus_import", key=KEY), {"name": "x", "text": "[]"}, headers=HTMX
    )
    page = response.content.decode()
    assert response.status_code == 422
    assert 'id="import"' in page and "<html" not in page


def test_export_downloads_the_same_format(as_owner, corpus, atlas_document):
    response = as_owner.get(url("corpus_export", key=KEY, pk=corpus.pk))
    assert response["Content-Disposition"].startswith("attachment")
    exported = json.loads(response.content)
    assert [c["id"] for c in exported["candidates"]] == [
        c["id"] for c in atlas_document["candidates"]
    ]
    assert exported["directory"]["entities"] == atlas_document["directory"]["entities"]


def test_edit_one_candidate_in_a_form(as_owner, corpus):
    edit = url("candidate_edit", key=KEY, pk=corpus.pk, candidate_id="rm-note-N7")
    page = as_owner.get(edit).content.decode()
    assert "The relationship manager says renewal was requested." in page
    assert 'name="lock_version" value="0"' in page
    form = {
        "lock_version": "0",
        "id": "rm-note-N7",
        "entity": "ATLAS-IN-01",
        "evidence_class": "case_note",
        "allowed_roles": "credit_analyst",
        "allowed_purposes": "annual_credit_review",
        "supports": "waiver_valid",
        "contradicts": "",
        "valid_from": "2026-08-29",
        "tokens": "120",
        "relevance": "0.97",
        "role": "evidence",
        "requirement": "preferred",
        "content": "Manager already approved this.",
        "other": "",
    }
    response = as_owner.post(edit, form)
    assert response.status_code == 302
    stored = corpus.candidates.get(candidate_id="rm-note-N7").data
    assert stored["content"] == "Manager already approved this." and stored["relevance"] == 0.97
    form["lock_version"] = "1"
    # A dependency outside the corpus is accepted, as the compiler accepts it.
    response = as_owner.post(edit, form | {"other": '{"depends_on": ["ghost"]}'})
    assert response.status_code == 302
    assert corpus.candidates.get(candidate_id="rm-note-N7").data["depends_on"] == ["ghost"]
    form["lock_version"] = "2"
    response = as_owner.post(edit, form | {"superseded_by": "rm-note-N7"})
    assert response.status_code == 422
    assert "a candidate cannot (even indirectly) supersede itself" in response.content.decode()
    add = url("candidate_add", key=KEY, pk=corpus.pk)
    response = as_owner.post(
        add, form | {"lock_version": "", "id": "email-1", "other": '{"denied_roles": ["x"]}'}
    )
    assert response.status_code == 302
    assert corpus.candidates.get(candidate_id="email-1").data["denied_roles"] == ["x"]


def test_create_a_scenario_in_a_form(as_owner, corpus):
    response = as_owner.post(
        url("scenario_create", key=KEY),
        {
            "name": "from the form",
            "corpus": corpus.pk,
            "principal": "maya",
            "roles": "credit_analyst",
            "purpose": "annual_credit_review",
            "entity": "Atlas",
            "decision_date": "2026-08-30",
            "token_budget": "760",
            "expect_waiver_valid": "unknown",
            "expect_facility_limit": "",
            "check_rejected": "on",
            "expected_rejected": "investigation-X9, policy-P2",
        },
    )
    scenario = Scenario.objects.get(name="from the form")
    assert response.status_code == 302
    assert scenario.expected_slots == {"waiver_valid": "unknown"}
    assert scenario.expected_rejected == ["investigation-X9", "policy-P2"]
    assert scenario.expected_admitted is None
    response = as_owner.post(
        url("scenario_edit", key=KEY, pk=scenario.pk),
        {
            "lock_version": "0",
            "name": "renamed",
            "corpus": corpus.pk,
            "principal": "maya",
            "roles": "credit_analyst",
            "purpose": "annual_credit_review",
            "entity": "Atlas",
            "decision_date": "2026-08-31",
            "token_budget": "700",
            "delegation": '{"service": "svc"}',
        },
    )
    assert response.status_code == 422 and "delegation" in response.content.decode()


def test_scenario_page_shows_the_packet_and_what_taking_it_would_change(
    as_owner, atlas, owner, corpus, scenario_fields
):
    scenario = services.scenario_create(
        actor=owner,
        decision_type=atlas,
        corpus=corpus,
        name="hopeful",
        **scenario_fields(expected_slots={"waiver_valid": "supported"}),
    )
    page = as_owner.get(url("scenario_detail", key=KEY, pk=scenario.pk)).content.decode()
    assert "Taking this result as expected would change" in page
    assert "Blocking gaps" in page and "waiver_valid" in page
    assert "policy-P2" in page and "superseded" in page
    # Never the content of a rejected candidate.
    assert "Restricted investigation note." not in page
    assert "Superseded continuation wording." not in page
    assert "Approved overdraft limit: 2.0m." in page
    token = page.split('name="token" value="')[1].split('"')[0]
    assert 'name="lock_version" value="0"' in page
    response = as_owner.post(
        url("scenario_take_expected", key=KEY, pk=scenario.pk),
        {"version": 1, "token": "stale"},
        headers=HTMX,
    )
    assert response.status_code == 409 and views.EXPECTATIONS_MOVED in response.content.decode()
    response = as_owner.post(
        url("scenario_take_expected", key=KEY, pk=scenario.pk),
        {"version": 1, "token": token, "lock_version": 0},
        headers=HTMX,
    )
    page = response.content.decode()
    assert response.status_code == 200 and "<html" not in page
    assert escape(views.EXPECTATIONS_TAKEN.format(name="hopeful", number=1)) in page
    assert "This result meets every expectation" in page
    scenario.refresh_from_db()
    assert scenario.expected_slots["waiver_valid"] == "unknown"


def test_compare_highlights_unsafe_items(as_owner, scenario):
    page = as_owner.get(
        url("scenario_compare", key=KEY, pk=scenario.pk) + "?top_k=5"
    ).content.decode()
    assert '<span class="unsafe" title="unsafe"><bdi>investigation-X9</bdi></span>' in page
    assert "<bdi>investigation-X9</bdi> — <bdi>not_authorised (role)</bdi>" in page
    assert "Restricted investigation note." not in page
    partial = as_owner.get(url("scenario_compare", key=KEY, pk=scenario.pk), headers=HTMX)
    assert "<html" not in partial.content.decode() and 'id="comparison"' in partial.content.decode()


def test_run_from_the_page_then_matrix_diff_packet_and_coverage(as_owner, draft, scenario):
    response = as_owner.post(url("run_start", key=KEY), {"version": draft.number})
    run = scenario.decision_type.suite_runs.get()
    assert response["Location"] == url("run_detail", key=KEY, pk=run.pk)
    page = as_owner.get(response["Location"]).content.decode()
    assert "Flip matrix" in page and 'class="cell flipped' in page
    flipped = run.results.get(perturbation="hide(facility-F102)")
    diff_url = url("result_diff", key=KEY, run_pk=run.pk, pk=flipped.pk)
    assert f'hx-get="{diff_url}?proposition=facility_limit"' in page
    diff = as_owner.get(diff_url + "?proposition=facility_limit", headers=HTMX).content.decode()
    assert "<html" not in diff and "flipped" in diff and "facility-F102" in diff
    packet = as_owner.get(url("result_packet", key=KEY, run_pk=run.pk, pk=flipped.pk)).content
    assert b"Budget" in packet and b"Trace" in packet
    streamed = as_owner.get(url("run_report", key=KEY, pk=run.pk))
    assert streamed.streaming and streamed["Content-Type"] == "application/json"
    report = json.loads(b"".join(streamed.streaming_content))
    assert report["summary"]["scenarios"] == 1 and report["failures"] == []
    assert {"scenario": scenario.name, "perturbation": "hide(facility-F102)"}.items() <= next(
        f for f in report["flips"] if f["perturbation"] == "hide(facility-F102)"
    ).items()
    coverage = as_owner.get(url("run_coverage", key=KEY, pk=run.pk)).content.decode()
    assert "Never exercised" in coverage
    matrix = as_owner.get(url("run_detail", key=KEY, pk=run.pk) + "?flips=1", headers=HTMX)
    assert 'id="matrix"' in matrix.content.decode() and "<html" not in matrix.content.decode()


def test_progress_polls_while_active_and_stops_with_the_result_when_done(as_owner, finished_run):
    from scenarios.models import SuiteRun

    runs = as_owner.get(url("suite", key=KEY), headers=HTMX).content.decode()
    assert 'id="runs"' in runs and "<html" not in runs and "every 2s" not in runs

    detail = url("run_detail", key=KEY, pk=finished_run.pk)
    # Finished: the poll stops (htmx's 286) and its answer is the result itself, swapped in
    # once; no reload (each reload of a large matrix was cut short by the next poll).
    response = as_owner.get(detail + "?partial=progress", headers=HTMX)
    page = response.content.decode()
    assert response.status_code == 286
    assert "HX-Refresh" not in response and "HX-Redirect" not in response
    assert "hx-trigger" not in page and 'id="matrix"' in page and "<html" not in page
    SuiteRun.objects.filter(pk=finished_run.pk).update(status="running", done=0)
    response = as_owner.get(detail + "?partial=progress", headers=HTMX)
    page = response.content.decode()
    assert response.status_code == 200
    assert 'hx-trigger="every 1s"' in page and "0 of 1 scenarios" in page and "<html" not in page
    assert 'id="matrix"' not in page
    assert 'role="progressbar"' in as_owner.get(detail).content.decode()
    runs = as_owner.get(url("suite", key=KEY), headers=HTMX).content.decode()
    assert 'hx-trigger="every 2s"' in runs and "0%" in runs


@pytest.mark.parametrize(
    "name, kwargs",
    [
        ("suite", {}),
        ("corpus_detail", {"pk": "corpus"}),
        ("corpus_export", {"pk": "corpus"}),
        ("scenario_detail", {"pk": "scenario"}),
        ("scenario_compare", {"pk": "scenario"}),
        ("run_detail", {"pk": "run"}),
        ("run_coverage", {"pk": "run"}),
    ],
)
def test_no_permission_on_the_type_means_404(
    client, stranger, other_owner, finished_run, corpus, scenario, name, kwargs
):
    objects = {"corpus": corpus.pk, "scenario": scenario.pk, "run": finished_run.pk}
    target = url(name, key=KEY, **{k: objects[v] for k, v in kwargs.items()})
    for person in (stranger, other_owner):
        client.force_login(person)
        assert client.get(target).status_code == 404
        assert client.get(target, headers=HTMX).status_code == 404


def test_results_of_an_invisible_run_are_404(client, other_owner, finished_run):
    client.force_login(other_owner)
    result = finished_run.results.first()
    for name in ("result_packet", "result_diff"):
        assert (
            client.get(url(name, key=KEY, run_pk=finished_run.pk, pk=result.pk)).status_code == 404
        )


@pytest.mark.parametrize(
    "name, model, lookup",
    [
        ("corpus_detail", Corpus, "corpus_for_user"),
        ("scenario_detail", Scenario, "scenario_for_user"),
        ("run_detail", SuiteRun, "run_for_user"),
    ],
)
def test_a_missing_object_of_a_visible_type_is_its_models_does_not_exist_and_a_404(
    as_owner, owner, atlas, name, model, lookup
):
    with pytest.raises(model.DoesNotExist):
        getattr(selectors, lookup)(user=owner, key=KEY, pk=999999)
    response = as_owner.get(url(name, key=KEY, pk=999999))
    assert response.status_code == 404


def test_a_viewer_reads_but_cannot_write(client, viewer, corpus, scenario, draft):
    client.force_login(viewer)
    assert client.get(url("scenario_detail", key=KEY, pk=scenario.pk)).status_code == 200
    assert client.get(url("corpus_import", key=KEY)).status_code == 403
    assert client.get(url("scenario_create", key=KEY)).status_code == 403
    assert client.post(url("run_start", key=KEY), {"version": draft.number}).status_code == 403
    assert (
        client.post(
            url("scenario_take_expected", key=KEY, pk=scenario.pk), {"version": 1}
        ).status_code
        == 403
    )
    assert (
        "Take the current result"
        not in client.get(url("scenario_detail", key=KEY, pk=scenario.pk)).content.decode()
    )


def test_form_errors_name_the_field_they_are_about(as_owner, corpus, scenario):
    """A problem in a JSON field says which key it is about, not only what is wrong."""
    response = as_owner.post(
        url("scenario_edit", key=KEY, pk=scenario.pk),
        {
            "lock_version": "0",
            "name": "renamed",
            "corpus": corpus.pk,
            "principal": "maya",
            "roles": "credit_analyst",
            "purpose": "annual_credit_review",
            "entity": "Atlas",
            "decision_date": "2026-08-31",
            "token_budget": "700",
            "delegation": '{"service": 1}',
        },
    )
    page = response.content.decode()
    assert response.status_code == 422
    assert "service: Input should be a valid string" in page
    assert "on_behalf_of: Field required" in page
    edit = url("candidate_edit", key=KEY, pk=corpus.pk, candidate_id="rm-note-N7")
    form = {
        "lock_version": "0",
        "id": "rm-note-N7",
        "entity": "ATLAS-IN-01",
        "evidence_class": "case_note",
        "allowed_roles": "credit_analyst",
        "allowed_purposes": "annual_credit_review",
        "supports": "waiver_valid",
        "valid_from": "2026-08-29",
        "tokens": "120",
        "relevance": "0.97",
        "role": "evidence",
        "requirement": "preferred",
        "content": "x",
    }
    response = as_owner.post(edit, form | {"other": '{"colour": "red"}'})
    assert response.status_code == 422
    assert "colour: Extra inputs are not permitted" in response.content.decode()
    response = as_owner.post(edit, form | {"tokens": str(10**22)})
    assert response.status_code == 422
    assert "RFC 8785" in response.content.decode()


def test_the_diff_says_none_when_nothing_is_newly_rejected(as_owner, finished_run):
    from scenarios import selectors

    variants = finished_run.results.exclude(perturbation="")
    quiet = next(
        r for r in variants if not selectors.result_diff(result=r, focus=None).rejected_added
    )
    page = as_owner.get(
        url("result_diff", key=KEY, run_pk=finished_run.pk, pk=quiet.pk), headers=HTMX
    ).content.decode()
    newly = page.split("Newly rejected:")[1].split("No longer rejected:")[0]
    assert '<p class="none">none</p>' in newly and "<li>" not in newly


def test_pages_link_a_favicon_that_exists(as_owner, atlas):
    from django.contrib.staticfiles import finders

    page = as_owner.get(url("index")).content.decode()
    assert '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">' in page
    assert finders.find("favicon.svg")


def test_the_next_rows_answer_only_those_who_see_the_run(
    client, viewer, stranger, other_owner, finished_run
):
    """htmx may ask for the rows partial directly: it is checked as the page is."""
    base = finished_run.results.get(perturbation="")
    rows = url("run_detail", key=KEY, pk=finished_run.pk) + f"?show=all&after={base.position}"
    for person in (stranger, other_owner):
        client.force_login(person)
        for headers in (HTMX, {}):
            response = client.get(rows + "&partial=rows", headers=headers)
            assert response.status_code == 404
            assert base.scenario_name.encode() not in response.content
    client.force_login(viewer)
    fragment = client.get(rows + "&partial=rows", headers=HTMX).content.decode()
    assert "<html" not in fragment and '<tr class="base"' not in fragment
    # The first row continues the scenario above it: its name is shown beside the variant's.
    assert fragment.count('<tr class="variant"') == finished_run.results.count() - 1
    assert f"<bdi>{base.scenario_name}</bdi> · " in fragment.split("</tr>")[0]


@pytest.mark.parametrize("after", ["abc", "-3", "1e3", ""])
def test_a_position_that_is_no_number_shows_the_first_rows(as_owner, finished_run, after):
    detail = url("run_detail", key=KEY, pk=finished_run.pk)
    response = as_owner.get(detail, {"show": "all", "after": after})
    assert response.status_code == 200
    rows = response.content.decode().split('<table class="matrix"')[1]
    assert '<tr class="base"' in rows.split("</tr>")[1] and 'rel="first"' not in rows


def test_reading_a_run_whose_worker_stopped_changes_nothing(as_owner, finished_run):
    """Recovering a stale run is the workers' stale-work check's job: a GET never writes
    (the page and its progress poll both only read)."""
    from datetime import timedelta

    from django.utils import timezone

    from scenarios.models import SuiteRun

    long_ago = timezone.now() - timedelta(days=1)
    SuiteRun.objects.filter(pk=finished_run.pk).update(
        status="running", done=0, heartbeat_at=long_ago, finished_at=None
    )
    before = SuiteRun.objects.values().get(pk=finished_run.pk)
    detail = url("run_detail", key=KEY, pk=finished_run.pk)
    assert as_owner.get(detail).status_code == 200
    poll = as_owner.get(detail + "?partial=progress", headers=HTMX)
    assert poll.status_code == 200 and "requeued" not in poll.content.decode()
    assert SuiteRun.objects.values().get(pk=finished_run.pk) == before
    assert finished_run.chunks.filter(status="queued").count() == 0
