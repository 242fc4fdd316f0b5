"""Optimistic locking of scenarios and candidates: two owners editing the same row at once.

The form carries the row's `lock_version`; a save based on an older revision is refused with
409 and a clear message, nothing is saved, and the form still holds what the person typed.
"""

from __future__ import annotations

from html import escape

import pytest
from django.urls import reverse

from contracts.models import AuditEvent
from contracts.services import EditConflict
from scenarios import services
from scenarios.models import CorpusCandidate
from workbench.views import scenarios as views

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}
KEY = "credit.review.continuation"


def url(name, **kwargs):
    return reverse(f"scenarios:{name}", kwargs=kwargs)


def scenario_form(corpus, **changes):
    return {
        "lock_version": "0",
        "name": "Maya asks about Atlas",
        "corpus": corpus.pk,
        "principal": "maya",
        "roles": "credit_analyst",
        "purpose": "annual_credit_review",
        "entity": "Atlas Industries",
        "decision_date": "2026-08-30",
        "token_budget": "760",
        "expect_facility_limit": "supported",
        "expect_review_open": "supported",
        "expect_waiver_valid": "unknown",
        "expect_continuation_rule": "supported",
    } | changes


def candidate_form(**changes):
    return {
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
        "relevance": "0.9",
        "role": "evidence",
        "requirement": "preferred",
        "content": "The relationship manager says renewal was requested.",
        "other": "",
    } | changes


# --------------------------------------------------------------------------- scenarios


def test_a_fresh_scenario_edit_saves_and_bumps_the_counter(as_owner, corpus, scenario):
    edit = url("scenario_edit", key=KEY, pk=scenario.pk)
    assert 'name="lock_version" value="0"' in as_owner.get(edit).content.decode()
    response = as_owner.post(edit, scenario_form(corpus, token_budget="700"))
    assert response.status_code == 302
    scenario.refresh_from_db()
    assert scenario.token_budget == 700 and scenario.lock_version == 1
    assert 'name="lock_version" value="1"' in as_owner.get(edit).content.decode()


def test_a_stale_scenario_edit_is_refused_and_keeps_the_input(
    as_owner, client, owner, corpus, scenario
):
    edit = url("scenario_edit", key=KEY, pk=scenario.pk)
    # Someone else saves first (the form both opened said lock_version 0).
    services.scenario_update(
        actor=owner, scenario=scenario, corpus=corpus, expected_lock_version=0, token_budget=500
    )
    events = AuditEvent.objects.count()
    response = as_owner.post(
        edit, scenario_form(corpus, token_budget="700", description="my careful notes")
    )
    page = response.content.decode()
    assert response.status_code == 409
    assert escape(services.STALE_SCENARIO) in page
    # The form still holds what was typed.
    assert "my careful notes" in page and 'value="700"' in page
    scenario.refresh_from_db()
    assert scenario.token_budget == 500 and scenario.description == ""
    assert scenario.lock_version == 1
    assert AuditEvent.objects.count() == events


def test_a_scenario_edit_without_its_lock_value_is_refused(as_owner, corpus, scenario):
    response = as_owner.post(
        url("scenario_edit", key=KEY, pk=scenario.pk),
        scenario_form(corpus, lock_version="", token_budget="700"),
        headers=HTMX,
    )
    assert response.status_code == 409
    assert "<html" not in response.content.decode()
    scenario.refresh_from_db()
    assert scenario.token_budget == 760 and scenario.lock_version == 0


def test_the_service_refuses_a_stale_scenario_edit(owner, corpus, scenario):
    services.scenario_update(
        actor=owner, scenario=scenario, corpus=corpus, expected_lock_version=0, name="first"
    )
    with pytest.raises(EditConflict) as caught:
        services.scenario_update(
            actor=owner, scenario=scenario, corpus=corpus, expected_lock_version=0, name="second"
        )
    assert caught.value.message == services.STALE_SCENARIO
    scenario.refresh_from_db()
    assert scenario.name == "first" and scenario.lock_version == 1
    # Without a form (commands, other apps) the comparison is skipped, the counter still moves.
    services.scenario_update(actor=owner, scenario=scenario, corpus=corpus, name="third")
    scenario.refresh_from_db()
    assert scenario.name == "third" and scenario.lock_version == 2


def test_take_as_expected_is_refused_after_someone_else_saved(
    as_owner, atlas, owner, corpus, scenario_fields
):
    scenario = services.scenario_create(
        actor=owner,
        decision_type=atlas,
        corpus=corpus,
        name="hopeful",
        **scenario_fields(expected_slots={"waiver_valid": "supported"}),
    )
    detail = url("scenario_detail", key=KEY, pk=scenario.pk)
    page = as_owner.get(detail).content.decode()
    token = page.split('name="token" value="')[1].split('"')[0]
    # Someone else changes a description: the result is the same, the scenario is not.
    services.scenario_update(
        actor=owner,
        scenario=scenario,
        corpus=corpus,
        expected_lock_version=0,
        description="edited elsewhere",
    )
    take = url("scenario_take_expected", key=KEY, pk=scenario.pk)
    response = as_owner.post(take, {"version": 1, "token": token, "lock_version": 0}, headers=HTMX)
    page = response.content.decode()
    assert response.status_code == 409
    assert escape(services.STALE_SCENARIO) in page
    assert 'name="lock_version" value="1"' in page  # the current revision, to take again
    scenario.refresh_from_db()
    assert scenario.expected_slots == {"waiver_valid": "supported"}
    assert scenario.lock_version == 1
    # The result-changed refusal still comes first and still says so.
    response = as_owner.post(take, {"version": 1, "token": "stale", "lock_version": 1})
    assert response.status_code == 409
    assert views.EXPECTATIONS_MOVED in response.content.decode()


def test_take_as_expected_bumps_the_counter(owner, draft, scenario):
    services.scenario_take_expected(
        actor=owner,
        scenario=scenario,
        expectations={"expected_slots": {"waiver_valid": "supported"}},
        version=draft,
        expected_lock_version=0,
    )
    scenario.refresh_from_db()
    assert scenario.expected_slots == {"waiver_valid": "supported"}
    assert scenario.lock_version == 1
    with pytest.raises(EditConflict):
        services.scenario_take_expected(
            actor=owner,
            scenario=scenario,
            expectations={"expected_slots": {}},
            version=draft,
            expected_lock_version=0,
        )
    scenario.refresh_from_db()
    assert scenario.expected_slots == {"waiver_valid": "supported"}


# --------------------------------------------------------------------------- candidates


def test_a_fresh_candidate_edit_saves_and_bumps_the_counter(as_owner, corpus):
    edit = url("candidate_edit", key=KEY, pk=corpus.pk, candidate_id="rm-note-N7")
    response = as_owner.post(edit, candidate_form(content="Renewal requested in writing."))
    assert response.status_code == 302
    row = corpus.candidates.get(candidate_id="rm-note-N7")
    assert row.data["content"] == "Renewal requested in writing." and row.lock_version == 1
    assert 'name="lock_version" value="1"' in as_owner.get(edit).content.decode()


def test_a_stale_candidate_edit_is_refused_and_keeps_the_input(as_owner, owner, corpus):
    edit = url("candidate_edit", key=KEY, pk=corpus.pk, candidate_id="rm-note-N7")
    row = corpus.candidates.get(candidate_id="rm-note-N7")
    theirs = row.data | {"content": "Their version."}
    services.candidate_save(
        actor=owner, corpus=corpus, data=theirs, original_id="rm-note-N7", expected_lock_version=0
    )
    events = AuditEvent.objects.count()
    response = as_owner.post(edit, candidate_form(content="My long, careful rewrite."))
    page = response.content.decode()
    assert response.status_code == 409
    assert escape(services.STALE_CANDIDATE) in page
    assert "My long, careful rewrite." in page
    row.refresh_from_db()
    assert row.data["content"] == "Their version." and row.lock_version == 1
    assert AuditEvent.objects.count() == events


def test_the_service_refuses_a_stale_candidate_edit(owner, corpus):
    row = corpus.candidates.get(candidate_id="rm-note-N7")
    with pytest.raises(EditConflict) as caught:
        services.candidate_save(
            actor=owner,
            corpus=corpus,
            data=row.data | {"content": "x"},
            original_id="rm-note-N7",
            expected_lock_version=3,
        )
    assert caught.value.message == services.STALE_CANDIDATE
    row.refresh_from_db()
    assert row.lock_version == 0 and row.data["content"] != "x"


def test_replacing_a_corpus_makes_open_candidate_forms_stale(as_owner, owner, atlas, corpus):
    from scenarios.selectors import corpus_export

    services.corpus_import(
        actor=owner,
        decision_type=atlas,
        name="atlas",
        document=corpus_export(corpus=corpus),
        replace=True,
    )
    assert set(CorpusCandidate.objects.values_list("lock_version", flat=True)) == {1}
    edit = url("candidate_edit", key=KEY, pk=corpus.pk, candidate_id="rm-note-N7")
    assert as_owner.post(edit, candidate_form()).status_code == 409


def test_a_candidate_renamed_by_someone_else_keeps_the_input(as_owner, owner, corpus):
    edit = url("candidate_edit", key=KEY, pk=corpus.pk, candidate_id="rm-note-N7")
    row = corpus.candidates.get(candidate_id="rm-note-N7")
    services.candidate_save(
        actor=owner,
        corpus=corpus,
        data=row.data | {"id": "rm-note-N7b"},
        original_id="rm-note-N7",
        expected_lock_version=0,
    )
    response = as_owner.post(edit, candidate_form(content="My long, careful rewrite."))
    page = response.content.decode()
    assert response.status_code == 409
    assert escape(views.CANDIDATE_GONE.format(id="rm-note-N7")) in page
    assert "My long, careful rewrite." in page
    assert not corpus.candidates.filter(candidate_id="rm-note-N7").exists()
    assert corpus.candidates.get(candidate_id="rm-note-N7b").data["content"] != (
        "My long, careful rewrite."
    )
    assert as_owner.get(edit).status_code == 404
