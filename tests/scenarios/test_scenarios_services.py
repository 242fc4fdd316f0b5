"""Services: importing corpora, editing candidates, scenarios, expectations and runs."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from compiler import load_input
from contracts.models import AuditEvent
from scenarios import compiling, services
from scenarios.models import Corpus, CorpusCandidate, SuiteRun

pytestmark = pytest.mark.django_db


def test_import_stores_every_candidate_and_the_directory(corpus, atlas_document):
    assert corpus.candidates.count() == len(atlas_document["candidates"])
    assert corpus.directory["entities"] == {"ATLAS-IN-01": ["Atlas", "Atlas Industries"]}
    assert AuditEvent.objects.filter(action=services.Action.CORPUS_IMPORTED).count() == 1


def test_import_reports_every_invalid_item_and_saves_nothing(atlas, owner, atlas_document):
    items = atlas_document["candidates"]
    items[1]["tokens"] = -5
    items[3]["relevance"] = 2
    del items[4]["entity"]
    items[5]["id"] = items[0]["id"]
    with pytest.raises(compiling.CorpusInvalid) as caught:
        services.corpus_import(
            actor=owner, decision_type=atlas, name="bad", document=atlas_document
        )
    located = [(p.index, p.field) for p in caught.value.problems]
    assert located == [(1, "tokens"), (3, "relevance"), (4, "entity"), (5, "id")]
    assert "duplicate candidate id" in caught.value.problems[-1].msg
    assert not Corpus.objects.exists() and not CorpusCandidate.objects.exists()


def test_import_needs_the_owner(atlas, viewer, atlas_document):
    with pytest.raises(PermissionDenied):
        services.corpus_import(actor=viewer, decision_type=atlas, name="x", document=atlas_document)


def test_import_refuses_a_second_corpus_of_the_same_name_unless_replacing(
    corpus, atlas, owner, atlas_document
):
    with pytest.raises(ValidationError):
        services.corpus_import(
            actor=owner, decision_type=atlas, name="atlas", document=atlas_document
        )
    atlas_document["candidates"] = atlas_document["candidates"][:2]
    services.corpus_import(
        actor=owner, decision_type=atlas, name="atlas", document=atlas_document, replace=True
    )
    assert corpus.candidates.count() == 2


def test_export_round_trips(corpus, atlas_document):
    from scenarios import selectors

    exported = selectors.corpus_export(corpus=corpus)
    again = compiling.validate_corpus(exported)
    assert again.candidates == compiling.validate_corpus(atlas_document).candidates


def test_candidate_add_and_edit(corpus, owner):
    data = dict(corpus.candidates.get(candidate_id="rm-note-N7").data)
    data["id"] = "rm-note-N8"
    data["content"] = "Manager already approved this."
    services.candidate_save(actor=owner, corpus=corpus, data=data)
    assert corpus.candidates.filter(candidate_id="rm-note-N8").exists()
    data["tokens"] = 10
    saved = services.candidate_save(actor=owner, corpus=corpus, data=data, original_id="rm-note-N8")
    assert saved.data["tokens"] == 10
    with pytest.raises(ValidationError) as caught:
        services.candidate_save(
            actor=owner,
            corpus=corpus,
            data=data | {"id": "facility-F102"},
            original_id="rm-note-N8",
        )
    assert caught.value.message_dict["id"] == [
        services.DUPLICATE_CANDIDATE.format(id="facility-F102")
    ]
    with pytest.raises(ValidationError) as caught:
        services.candidate_save(actor=owner, corpus=corpus, data=data | {"relevance": 3})
    assert "relevance" in caught.value.message_dict


def test_the_editor_accepts_references_outside_the_corpus_as_the_compiler_does(corpus, owner):
    data = dict(corpus.candidates.get(candidate_id="rm-note-N7").data)
    saved = services.candidate_save(
        actor=owner, corpus=corpus, data=data | {"id": "n9", "depends_on": ["appendix-A"]}
    )
    assert saved.data["depends_on"] == ["appendix-A"]
    saved = services.candidate_save(
        actor=owner, corpus=corpus, data=data | {"id": "n10", "superseded_by": "policy-v9"}
    )
    assert saved.data["superseded_by"] == "policy-v9"
    # What the compiler refuses across a pool, the editor refuses on the field.
    with pytest.raises(ValidationError) as caught:
        services.candidate_save(
            actor=owner,
            corpus=corpus,
            data=data | {"id": "policy-v9", "superseded_by": "n10"},
        )
    assert caught.value.message_dict == {
        "superseded_by": [
            "superseded_by 'n10' leads back to 'policy-v9': "
            "a candidate cannot (even indirectly) supersede itself"
        ]
    }
    assert not corpus.candidates.filter(candidate_id="policy-v9").exists()


def test_scenario_validation(atlas, owner, corpus, scenario, scenario_fields):
    with pytest.raises(ValidationError) as caught:
        services.scenario_create(
            actor=owner,
            decision_type=atlas,
            corpus=corpus,
            name=scenario.name,
            **scenario_fields(),
        )
    assert "name" in caught.value.message_dict
    with pytest.raises(ValidationError) as caught:
        services.scenario_create(
            actor=owner,
            decision_type=atlas,
            corpus=corpus,
            name="odd",
            **scenario_fields(expected_slots={"waiver_valid": "maybe"}),
        )
    assert "expected_slots" in caught.value.message_dict


def test_a_run_compiles_base_and_the_standard_suite(finished_run, scenario):
    assert finished_run.status == SuiteRun.Status.FINISHED
    assert finished_run.done == finished_run.total == 1
    results = list(finished_run.results.all())
    base = results[0]
    assert base.is_base and base.expectation_failures == []
    assert base.slot_states["waiver_valid"] == "unknown"
    names = [r.perturbation for r in results[1:]]
    assert "shift_days(+1)" in names and "contaminate(50)" in names
    assert "substitute_class(facility-F102, case_note)" in names
    flipped = {r.perturbation: r.flips["slots"] for r in results[1:] if r.flips["slots"]}
    assert flipped["hide(facility-F102)"][0]["variant"] == "unknown"
    summary = finished_run.summary
    assert summary["scenarios"] == 1 and summary["failures"] == 0
    assert summary["compiles"] == len(results)
    assert all(len(r.input_sha256) == 64 for r in results)
    assert base.output["plan_id"] == base.plan_id


def test_a_failed_expectation_is_recorded(owner, draft, atlas, corpus, scenario_fields):
    scenario = services.scenario_create(
        actor=owner,
        decision_type=atlas,
        corpus=corpus,
        name="hopeful",
        **scenario_fields(expected_slots={"waiver_valid": "supported"}, expected_admitted=["x"]),
    )
    run = services.run_start(actor=owner, version=draft, scenario=scenario)
    base = run.results.get(position=0)
    assert base.expectation_failures[0] == {
        "what": "slot",
        "key": "waiver_valid",
        "expected": "supported",
        "actual": "unknown",
    }
    assert base.expectation_failures[1]["what"] == "admitted"
    assert run.summary["failures"] == 2


def test_take_the_current_result_as_expected(owner, draft, atlas, corpus, scenario_fields):
    from scenarios import selectors

    scenario = services.scenario_create(
        actor=owner,
        decision_type=atlas,
        corpus=corpus,
        name="hopeful",
        **scenario_fields(expected_slots={"waiver_valid": "supported"}, expected_rejected=[]),
    )
    preview = selectors.expectation_preview(scenario=scenario, version=draft)
    changes = {(c.field, c.key): (c.before, c.after) for c in preview.changes}
    assert changes[("slot", "waiver_valid")] == ("supported", "unknown")
    assert changes[("slot", "facility_limit")] == (None, "supported")
    assert ("rejected", "rejected") in changes
    services.scenario_take_expected(
        actor=owner, scenario=scenario, expectations=preview.expectations, version=draft
    )
    scenario.refresh_from_db()
    assert scenario.expected_slots["waiver_valid"] == "unknown"
    assert scenario.expected_rejected == ["investigation-X9", "policy-P2", "rm-note-N7"]
    assert scenario.expected_admitted is None  # not tracked before, not tracked now
    assert selectors.expectation_preview(scenario=scenario, version=draft).changes == []


def test_a_viewer_cannot_run_but_a_reviewer_can(viewer, reviewer, draft, scenario):
    with pytest.raises(PermissionDenied):
        services.run_start(actor=viewer, version=draft)
    assert services.run_start(actor=reviewer, version=draft).status == "finished"


def test_an_invalid_contract_fails_the_run(owner, draft, scenario):
    draft.propositions.update(accepted_classes=[])
    from contracts.services import _bump

    _bump(draft)
    draft.refresh_from_db()
    run = services.run_start(actor=owner, version=draft)
    # An empty accepted list is valid to the compiler; the run finishes with every slot unknown.
    assert run.status in {"finished", "failed"}


def test_an_unreadable_scenario_is_reported_not_crashed(owner, draft, scenario):
    from scenarios.models import Scenario

    Scenario.objects.filter(pk=scenario.pk).update(roles=[1])
    run = services.run_start(actor=owner, version=draft)
    assert run.status == "finished" and run.summary["invalid"] == 1
    (row,) = run.results.all()
    assert row.result == "invalid" and row.expectation_failures[0]["what"] == "input"
    assert row.expectation_failures[0]["key"] == "request.roles.0"


def test_scenario_input_uses_the_contract_document(scenario, draft):
    from contracts.documents import compiled_contract

    contract = compiled_contract(draft)
    models = compiling.CorpusModels.build(
        scenario.corpus.directory, [c.data for c in scenario.corpus.candidates.all()]
    )
    document = compiling.scenario_input(scenario.request_document(), contract, models)
    assert document == load_input(document.model_dump(mode="json"))


def test_two_runs_compared_slot_by_slot(owner, draft, scenario):
    from contracts import services as contract_services
    from scenarios import selectors

    before = services.run_start(actor=owner, version=draft)
    waiver = draft.propositions.get(key="waiver_valid")
    contract_services.accepted_class_add(
        actor=owner,
        proposition=waiver,
        expected_lock_version=draft.lock_version,
        class_key="case_note",
    )
    draft.refresh_from_db()
    after = services.run_start(actor=owner, version=draft)
    report = selectors.run_comparison(before=before, after=after)
    base_change = [c for c in report["changed"] if c["perturbation"] == ""]
    assert base_change == [
        {
            "scenario": scenario.name,
            "perturbation": "",
            "proposition": "waiver_valid",
            "before": "unknown",
            "after": "supported",
            "before_result": before.results.get(position=0).pk,
            "after_result": after.results.get(position=0).pk,
        }
    ]
    assert report["totals"]["changed_rows"] >= 1 and report["only_before"] == []


def test_a_run_is_executed_once(finished_run):
    compiles = finished_run.results.count()
    again = services.run_execute(run_id=finished_run.pk)
    assert again.status == "finished" and again.results.count() == compiles


HUGE = 10**22  # beyond RFC 8785's integers (±2**53 - 1): such a corpus could never be signed


def test_import_refuses_a_number_a_bundle_cannot_hash_and_saves_nothing(
    atlas, owner, atlas_document
):
    atlas_document["candidates"][2]["tokens"] = HUGE
    with pytest.raises(compiling.CorpusInvalid) as caught:
        services.corpus_import(
            actor=owner, decision_type=atlas, name="huge", document=atlas_document
        )
    assert [(p.index, p.field) for p in caught.value.problems] == [(2, "tokens")]
    assert caught.value.problems[0].msg == compiling.UNSAFE_NUMBER.format(value=HUGE)
    assert not Corpus.objects.exists()


def test_candidate_save_refuses_a_number_a_bundle_cannot_hash(corpus, owner):
    data = dict(corpus.candidates.get(candidate_id="rm-note-N7").data)
    with pytest.raises(ValidationError) as caught:
        services.candidate_save(
            actor=owner, corpus=corpus, data=data | {"tokens": HUGE}, original_id="rm-note-N7"
        )
    assert caught.value.message_dict == {"tokens": [compiling.UNSAFE_NUMBER.format(value=HUGE)]}
    assert corpus.candidates.get(candidate_id="rm-note-N7").data["tokens"] == data["tokens"]


def test_a_token_budget_beyond_what_a_bundle_can_hash_is_refused_on_every_database(
    atlas, owner, corpus, scenario_fields
):
    with pytest.raises(ValidationError) as caught:
        services.scenario_create(
            actor=owner,
            decision_type=atlas,
            corpus=corpus,
            name="huge budget",
            **scenario_fields(token_budget=2**60),
        )
    assert list(caught.value.message_dict) == ["token_budget"]


def test_nul_characters_are_refused_with_their_location_and_nothing_is_saved(
    atlas, owner, atlas_document, corpus, scenario_fields
):
    # PostgreSQL's JSON cannot hold U+0000: it was a 500 there (and stored on SQLite).
    atlas_document["candidates"][1]["content"] = "a\x00b"
    atlas_document["directory"]["entities"]["ATLAS-IN-01"].append("At\x00las")
    with pytest.raises(compiling.CorpusInvalid) as caught:
        services.corpus_import(
            actor=owner, decision_type=atlas, name="nul", document=atlas_document
        )
    assert [(p.index, p.field, p.msg) for p in caught.value.problems] == [
        (1, "content", compiling.NUL_CHARACTER),
        (None, "directory.entities.ATLAS-IN-01.2", compiling.NUL_CHARACTER),
    ]
    assert not Corpus.objects.filter(name="nul").exists()
    data = dict(corpus.candidates.get(candidate_id="rm-note-N7").data)
    with pytest.raises(ValidationError) as caught:
        services.candidate_save(
            actor=owner,
            corpus=corpus,
            data=data | {"source": {"kind": "note\x00", "ref": "r"}},
            original_id="rm-note-N7",
        )
    assert caught.value.message_dict == {"source": [f"kind: {compiling.NUL_CHARACTER}"]}
    delegation = {"service": "svc\x00", "on_behalf_of": "maya", "scopes": ["credit_analyst"]}
    with pytest.raises(ValidationError) as caught:
        services.scenario_create(
            actor=owner,
            decision_type=atlas,
            corpus=corpus,
            name="nul",
            **scenario_fields(delegation=delegation | {"valid_from": "2026-01-01"}),
        )
    assert caught.value.message_dict == {"delegation": [f"service: {compiling.NUL_CHARACTER}"]}
    with pytest.raises(ValidationError) as caught:
        services.scenario_create(
            actor=owner,
            decision_type=atlas,
            corpus=corpus,
            name="nul",
            **scenario_fields(roles=["credit_analyst", "a\x00b"], expected_rejected=["x\x00"]),
        )
    assert caught.value.message_dict == {
        "roles": [f"1: {compiling.NUL_CHARACTER}"],
        "expected_rejected": [f"0: {compiling.NUL_CHARACTER}"],
    }
