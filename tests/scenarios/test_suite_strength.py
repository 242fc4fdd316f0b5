"""Suite strength on the workbench: a run on the worker with its progress, the panel and who
may see and start it, and adding the scenario a surviving mutant's proposal asks for.

The engine is `compiler.mutation.run_mutation`; here a tiny stand-in (`FakeEngine`) gives a
report of interface 4's shape, so each test controls what the engine says: one mutant that
survives until a scenario pins the admitted set with the city's permit in it, one killed,
one equivalent. `test_suite_strength_engine.py` runs the real engine.
"""

from __future__ import annotations

import copy
import datetime as dt
import types
from typing import Any

import pytest
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape

from contracts.models import AuditEvent
from scenarios import services
from scenarios.audit import Action
from scenarios.models import Corpus, MutationRun, Scenario
from tests.scenarios import strength_domain as domain
from workbench.views import strength as views
from workers.management.commands.db_worker import check_stale_work

pytestmark = pytest.mark.django_db

SURVIVOR = "precedence_reversed:permit_valid"
PROPOSED = "Flat 12: the city's permit is the one kept"


def proposal(**changes: Any) -> dict[str, Any]:
    return {
        "name": PROPOSED,
        "description": "Both permits in the pool; the city's must be the one admitted.",
        "request": {
            "decision_type": domain.KEY,
            "principal": "dana",
            "roles": ["building_officer"],
            "purpose": "occupancy_check",
            "entity": "Flat 12",
            "decision_date": "2026-09-01",
            "token_budget": 600,
        },
        "directory": copy.deepcopy(domain.POOL["directory"]),
        "candidates": copy.deepcopy(domain.POOL["candidates"]),
        "based_on": domain.SCENARIO,
        "pool_from": domain.SCENARIO,
        "expected": {
            "slots": {"permit_valid": "supported", "inspection_passed": "supported"},
            "admitted": ["INSPECTION-22", "PERMIT-CITY-7"],
            "decision_ready": True,
        },
    } | changes


class FakeEngine:
    """`run_mutation` of interface 4, reduced to what the workbench relies on."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.proposal = proposal()
        self.on_progress = None  # called after each progress report, with (done, total)
        self.error: Exception | None = None

    def run_mutation(self, contract, cases, *, catalogue=None, weak_classes=(), progress=None,
                     mutants=None):  # fmt: skip
        self.calls.append(
            {"contract": contract, "cases": list(cases), "catalogue": dict(catalogue or {}),
             "weak_classes": list(weak_classes)}
        )  # fmt: skip
        for done in range(4):
            if progress is not None:
                progress(done, 3)
            if self.on_progress is not None:
                self.on_progress(done, 3)
        if self.error is not None:
            raise self.error
        pinned = any(
            "PERMIT-CITY-7" in ((case.expected or {}).get("admitted") or []) for case in cases
        )
        survivor = {
            "key": SURVIVOR,
            "kind": "precedence_reversed",
            "proposition": "permit_valid",
            "description": "county_permit before city_permit for permit_valid",
            "status": "killed" if pinned else "surviving",
            "killed_by": "expectations" if pinned else None,
            "reasons": ["Dana checks flat 12 admitted set"] if pinned else [],
            "advice": ""
            if pinned
            else "if the county's permit came first, no scenario "
            "would notice: add a scenario that pins which permit is admitted",
            "proposal": None if pinned else self.proposal,
        }
        mutants = [
            survivor,
            {"key": "weak_class_added:inspection_passed:site_memo", "kind": "weak_class_added",
             "proposition": "inspection_passed", "description": "site_memo accepted for "
             "inspection_passed", "status": "killed", "killed_by": "standard",
             "reasons": ["a weak class establishes inspection_passed"], "advice": "",
             "proposal": None},
            {"key": "max_items_raised:inspection_passed", "kind": "max_items_raised",
             "proposition": "inspection_passed", "description": "inspection_passed keeps up "
             "to 2 items", "status": "equivalent", "killed_by": None, "reasons": [],
             "advice": "", "proposal": None},
        ]  # fmt: skip
        killed = sum(m["status"] == "killed" for m in mutants)
        surviving = sum(m["status"] == "surviving" for m in mutants)
        report = {
            "score": killed / (killed + surviving),
            "totals": {"mutants": 3, "killed": killed, "surviving": surviving,
                       "equivalent": 1, "by_kind": {}},
            "mutants": mutants,
        }  # fmt: skip
        return types.SimpleNamespace(to_json=lambda: copy.deepcopy(report))


@pytest.fixture
def engine(monkeypatch, settings):
    settings.SUITE_RUN_HEARTBEAT_SECONDS = 0  # every progress report is written
    fake = FakeEngine()
    from scenarios import strength_runner

    monkeypatch.setattr(strength_runner, "run_mutation", fake.run_mutation)
    return fake


@pytest.fixture
def occupancy(owner, catalogue_manager, viewer, reviewer):
    decision_type, scenario = domain.create(
        owner=owner, catalogue_manager=catalogue_manager, viewers=[viewer], reviewers=[reviewer]
    )
    return decision_type


@pytest.fixture
def version(occupancy):
    return occupancy.versions.get()


def page(version) -> str:
    return reverse("version_strength", kwargs={"key": domain.KEY, "number": version.number})


def start_url(version) -> str:
    return reverse("version_strength_start", kwargs={"key": domain.KEY, "number": version.number})


def add_url(version) -> str:
    return reverse("version_strength_add", kwargs={"key": domain.KEY, "number": version.number})


def actions(version) -> list[str]:
    return list(
        AuditEvent.objects.filter(action__startswith="strength.").values_list("action", flat=True)
    )


# --------------------------------------------------------------------------- the run


def test_the_worker_runs_the_engine_on_the_scenarios_and_stores_its_report(engine, owner, version):
    run = services.mutation_run_start(actor=owner, version=version)

    assert run.status == MutationRun.Status.FINISHED
    call = engine.calls[0]
    # The version's contract, each scenario built as a suite run builds it, its expectations.
    assert [p.key for p in call["contract"].propositions] == ["permit_valid", "inspection_passed"]
    (case,) = call["cases"]
    assert case.name == domain.SCENARIO
    assert case.document.request.principal == "dana"
    assert case.document.contract == call["contract"]
    assert sorted(c.id for c in case.document.candidates) == sorted(
        c["id"] for c in domain.POOL["candidates"]
    )
    # What the scenario checks, as the expectation document (what it leaves unchecked out).
    assert case.expected == {
        "slots": {"permit_valid": "supported", "inspection_passed": "supported"}
    }
    # The catalogue's tiers and its weak classes.
    assert call["catalogue"]["city_permit"] == call["catalogue"]["county_permit"] == 1
    assert call["catalogue"]["site_memo"] == 4
    assert "site_memo" in call["weak_classes"]
    assert run.report["totals"]["surviving"] == 1
    assert (run.done, run.total, run.scenarios) == (3, 3, [domain.SCENARIO])
    assert run.contract_sha256
    assert actions(version) == ["strength.finished", "strength.started"]


def test_the_owners_expectations_on_perturbations_go_to_the_engine_by_perturbation(
    engine, owner, version, occupancy
):
    from compiler.perturb import Perturbation

    hide = {"operator": "hide", "args": {"candidate_id": "PERMIT-CITY-7"}}
    later = {"operator": "shift_days", "args": {"days": 400}}
    Scenario.objects.filter(name=domain.SCENARIO).update(
        variant_expectations=[
            hide | {"proposition": "permit_valid", "state": "supported"},
            later | {"proposition": "permit_valid", "state": "unknown"},
            hide | {"proposition": "inspection_passed", "state": "supported"},
        ]
    )

    services.mutation_run_start(actor=owner, version=version)

    (case,) = engine.calls[0]["cases"]
    assert list(case.variants) == [
        (
            Perturbation("hide", {"candidate_id": "PERMIT-CITY-7"}),
            {"slots": {"permit_valid": "supported", "inspection_passed": "supported"}},
        ),
        (Perturbation("shift_days", {"days": 400}), {"slots": {"permit_valid": "unknown"}}),
    ]


def test_progress_is_on_the_row_while_the_engine_works(engine, owner, version):
    seen = []

    def look(done, total):
        row = MutationRun.objects.get()
        seen.append((row.status, row.done, row.total))

    engine.on_progress = look
    services.mutation_run_start(actor=owner, version=version)

    assert seen == [("running", n, 3) for n in range(4)]


def test_a_run_the_engine_fails_says_why_on_the_page(engine, as_owner, owner, version):
    engine.error = ValueError("the pool has no candidate for permit_valid")
    run = services.mutation_run_start(actor=owner, version=version)

    assert run.status == MutationRun.Status.FAILED
    assert "the pool has no candidate for permit_valid" in run.error
    response = as_owner.get(page(version))
    assert "Suite strength failed: ValueError: the pool has no candidate" in response.text
    assert actions(version)[0] == "strength.failed"


def test_a_scenario_the_compiler_cannot_read_is_left_out_and_named(
    engine, owner, version, occupancy
):
    corpus = Corpus.objects.get(name=domain.CORPUS)
    services.scenario_create(
        actor=owner, decision_type=occupancy, corpus=corpus, name="No principal",
        **domain.REQUEST, expected_slots={},
    )  # fmt: skip
    # As a row written before the form checked it: a request the compiler refuses.
    Scenario.objects.filter(name="No principal").update(principal="")

    run = services.mutation_run_start(actor=owner, version=version)

    assert [c.name for c in engine.calls[0]["cases"]] == [domain.SCENARIO]
    assert [s["name"] for s in run.skipped] == ["No principal"]
    assert "principal" in run.skipped[0]["error"]


def test_the_page_polls_while_the_worker_computes_and_stops_with_the_report(
    engine, as_owner, owner, version, occupancy
):
    queued = MutationRun.objects.create(decision_type=occupancy, version=version, started_by=owner)
    MutationRun.objects.filter(pk=queued.pk).update(
        status="running", done=1, total=3, heartbeat_at=timezone.now()
    )

    polled = as_owner.get(page(version) + "?poll=1", headers={"HX-Request": "true"})
    assert polled.status_code == 200
    assert 'hx-trigger="every 1s"' in polled.text
    assert "1 of 3 mutants tried" in polled.text
    assert f'href="{page(version)}">Reload</a>' in polled.text  # the link without htmx
    assert "<html" not in polled.text  # the partial only

    MutationRun.objects.filter(pk=queued.pk).update(status="finished", done=3)
    MutationRun.objects.filter(pk=queued.pk).update(report=engine.run_mutation(None, []).to_json())
    done = as_owner.get(page(version) + "?poll=1", headers={"HX-Request": "true"})
    assert done.status_code == 286  # htmx stops polling; the report is swapped in once
    assert "every 1s" not in done.text
    assert 'id="count-surviving"' in done.text


def test_a_run_whose_worker_stopped_is_failed_by_the_workers_check_not_by_a_page_view(
    as_owner, owner, version, occupancy, settings
):
    run = MutationRun.objects.create(decision_type=occupancy, version=version, started_by=owner)
    stopped = timezone.now() - dt.timedelta(seconds=settings.SUITE_RUN_STALE_SECONDS + 5)
    MutationRun.objects.filter(pk=run.pk).update(status="running", heartbeat_at=stopped)

    as_owner.get(page(version))  # a GET writes nothing
    run.refresh_from_db()
    assert run.status == MutationRun.Status.RUNNING

    check_stale_work()
    response = as_owner.get(page(version))
    run.refresh_from_db()
    assert run.status == MutationRun.Status.FAILED
    assert "The worker computing this run stopped" in response.text
    assert "Run suite strength again" in response.text  # an owner starts it again


# --------------------------------------------------------------------------- the panel


def test_the_panel_shows_the_score_counts_and_each_surviving_mistake_in_words(
    engine, as_owner, owner, version
):
    services.mutation_run_start(actor=owner, version=version)
    response = as_owner.get(page(version))

    html = response.text
    assert '<strong id="strength-score">50%</strong>' in html  # 1 killed of 2, equivalent apart
    assert '<strong id="count-killed">1</strong>' in html
    assert 'id="count-surviving" class="failed-text">1</strong>' in html
    assert '<strong id="count-equivalent">1</strong>' in html
    assert "county_permit before city_permit for permit_valid" in html
    assert "no scenario would notice: add a scenario that pins which permit" in html
    assert "Add this scenario" in html
    # Equivalent mutants are listed apart from the score.
    equivalent = html.split('id="equivalent"')[1]
    assert "inspection_passed keeps up to 2 items" in equivalent
    assert "county_permit before" not in equivalent
    # The version's other pages link to it.
    editor = as_owner.get(reverse("version_detail", kwargs={"key": domain.KEY, "number": 1}))
    assert f'href="{page(version)}">Suite strength</a>' in editor.text


def test_a_version_without_a_run_says_so_and_offers_owners_to_start(as_owner, version):
    response = as_owner.get(page(version))
    assert "has not been computed for version 1 yet" in response.text
    assert f'action="{start_url(version)}"' in response.text


# --------------------------------------------------------------------------- permissions


def test_a_viewer_sees_the_panel_but_cannot_start_or_add(engine, client, owner, viewer, version):
    run = services.mutation_run_start(actor=owner, version=version)
    client.force_login(viewer)

    response = client.get(page(version))
    assert response.status_code == 200
    assert "county_permit before city_permit" in response.text
    assert "Add this scenario" not in response.text
    assert start_url(version) not in response.text

    assert client.post(start_url(version)).status_code == 403
    added = client.post(add_url(version), {"run": run.pk, "mutant": SURVIVOR})
    assert added.status_code == 403
    assert MutationRun.objects.count() == 1
    assert not Scenario.objects.filter(name=PROPOSED).exists()


def test_a_reviewer_may_read_but_not_start(engine, client, reviewer, version):
    client.force_login(reviewer)
    assert client.get(page(version)).status_code == 200
    assert client.post(start_url(version)).status_code == 403
    assert not MutationRun.objects.exists()


def test_another_team_gets_404_everywhere(engine, client, owner, other_owner, version):
    run = services.mutation_run_start(actor=owner, version=version)
    client.force_login(other_owner)

    assert client.get(page(version)).status_code == 404
    assert client.post(start_url(version)).status_code == 404
    assert client.post(add_url(version), {"run": run.pk, "mutant": SURVIVOR}).status_code == 404
    assert MutationRun.objects.count() == 1


def test_the_services_refuse_people_who_may_not_edit(engine, owner, viewer, version):
    from django.core.exceptions import PermissionDenied

    with pytest.raises(PermissionDenied):
        services.mutation_run_start(actor=viewer, version=version)
    run = services.mutation_run_start(actor=owner, version=version)
    with pytest.raises(PermissionDenied):
        services.proposal_add(actor=viewer, run=run, mutant_key=SURVIVOR)


def test_posts_need_the_csrf_token(engine, owner, version):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    assert client.post(start_url(version)).status_code == 403
    assert not MutationRun.objects.exists()


def test_the_run_and_add_urls_answer_only_post(as_owner, version):
    assert as_owner.get(start_url(version)).status_code == 405
    assert as_owner.get(add_url(version)).status_code == 405


# --------------------------------------------------------------------------- adding a scenario


def test_add_the_proposed_scenario_rerun_and_the_mutant_is_killed(
    engine, as_owner, owner, version, occupancy
):
    run = services.mutation_run_start(actor=owner, version=version)
    before = Corpus.objects.count()

    response = as_owner.post(add_url(version), {"run": run.pk, "mutant": SURVIVOR}, follow=True)

    assert response.status_code == 200
    added = Scenario.objects.get(name=PROPOSED)
    # The pool is the named scenario's: its corpus is reused, not copied.
    assert added.corpus.name == domain.CORPUS and Corpus.objects.count() == before
    assert added.principal == "dana" and added.decision_date == dt.date(2026, 9, 1)
    assert added.expected_admitted == ["INSPECTION-22", "PERMIT-CITY-7"]
    assert added.expected_slots == {"permit_valid": "supported", "inspection_passed": "supported"}
    assert "county_permit before city_permit" in added.description
    messages = [str(m) for m in response.context["messages"]]
    assert views.SCENARIO_ADDED.format(name=PROPOSED) in messages
    assert added.expected_decision_ready is True
    assert not any(m.startswith("Not pinned") for m in messages)
    event = AuditEvent.objects.get(action=Action.SCENARIO_CREATED, summary__contains=PROPOSED)
    assert event.actor == owner
    # The panel says it was added and that the run is now behind the suite.
    assert "Added. Run suite strength again" in response.text
    assert "scenarios were added: <bdi>" in response.text

    as_owner.post(start_url(version))
    rerun = MutationRun.objects.first()
    assert rerun.pk != run.pk
    survivor = next(m for m in rerun.mutants if m["key"] == SURVIVOR)
    assert survivor["status"] == "killed"
    assert survivor["killed_by"] == "expectations"
    assert '<strong id="strength-score">100%</strong>' in as_owner.get(page(version)).text


def test_a_proposal_with_a_pool_of_its_own_gets_a_corpus_named_for_it(engine, owner, version):
    engine.proposal = proposal(
        pool_from=None,
        candidates=[domain.POOL["candidates"][0], domain.POOL["candidates"][1]],
        expected={
            "slots": {"permit_valid": "supported", "inspection_passed": "unknown"},
            "blocking": ["inspection_passed"],
            "resource_ids": {"permit_valid": ["PERMIT-CITY-7"]},
            "required": {"permit_valid": True},
            "packet": ["PERMIT-CITY-7"],  # a key no scenario field holds
        },
    )
    run = services.mutation_run_start(actor=owner, version=version)

    scenario, unpinned = services.proposal_add(actor=owner, run=run, mutant_key=SURVIVOR)

    assert scenario.corpus.name == f"Suite strength: {PROPOSED}"
    ids = sorted(scenario.corpus.candidates.values_list("candidate_id", flat=True))
    assert ids == ["PERMIT-CITY-7", "PERMIT-COUNTY-3"]
    assert scenario.corpus.directory["entities"] == domain.POOL["directory"]["entities"]
    assert scenario.expected_blocking == ["inspection_passed"]
    assert scenario.expected_resource_ids == {"permit_valid": ["PERMIT-CITY-7"]}
    assert scenario.expected_required == {"permit_valid": True}
    assert scenario.expected_decision_ready is None  # not stated: not checked
    assert unpinned == ["packet"]
    assert AuditEvent.objects.filter(action=Action.CORPUS_IMPORTED).count() == 2


def test_a_corpus_edited_since_the_run_is_not_reused(engine, owner, version):
    run = services.mutation_run_start(actor=owner, version=version)
    corpus = Corpus.objects.get(name=domain.CORPUS)
    corpus.candidates.filter(candidate_id="MEMO-5").delete()

    scenario, _ = services.proposal_add(actor=owner, run=run, mutant_key=SURVIVOR)

    assert scenario.corpus != corpus
    assert scenario.corpus.candidates.count() == 4


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"mutant": SURVIVOR}, "run: This field is required."),
        ({"run": "1"}, "mutant: This field is required."),
        ({"run": "x", "mutant": SURVIVOR}, "run: Enter a whole number."),
    ],
)
def test_an_incomplete_add_is_refused_with_the_field(engine, as_owner, version, data, message):
    response = as_owner.post(add_url(version), data)
    assert response.status_code == 422
    assert message in response.text


def test_adding_what_is_no_surviving_proposal_is_refused_clearly(engine, as_owner, owner, version):
    run = services.mutation_run_start(actor=owner, version=version)

    def post(mutant):
        return as_owner.post(add_url(version), {"run": run.pk, "mutant": mutant})

    unknown = post("key_mistyped:nothing")
    assert unknown.status_code == 422
    assert escape(services.NO_SUCH_MUTANT.format(pk=run.pk, key="key_mistyped:nothing")) in (
        unknown.text
    )
    killed = post("weak_class_added:inspection_passed:site_memo")
    assert killed.status_code == 422
    assert "is killed, not surviving" in killed.text
    assert post(SURVIVOR).status_code == 302
    twice = post(SURVIVOR)
    assert twice.status_code == 422
    assert escape(services.ALREADY_ADDED.format(name=PROPOSED)) in twice.text
    assert Scenario.objects.filter(name=PROPOSED).count() == 1


def test_a_run_of_another_version_is_not_found(engine, as_owner, owner, version, occupancy):
    from contracts import services as contract_services
    from contracts.models import ContractVersion

    run = services.mutation_run_start(actor=owner, version=version)
    ContractVersion.objects.filter(pk=version.pk).update(status="published")
    second = contract_services.version_start_draft(actor=owner, decision_type=occupancy)
    url = reverse("version_strength_add", kwargs={"key": domain.KEY, "number": second.number})

    response = as_owner.post(url, {"run": run.pk, "mutant": SURVIVOR})

    assert response.status_code == 404
    assert not Scenario.objects.filter(name=PROPOSED).exists()


def test_a_proposal_for_another_decision_type_writes_nothing(engine, owner, version):
    request = proposal()["request"] | {"decision_type": "refund.eligibility"}
    engine.proposal = proposal(pool_from=None, request=request)
    run = services.mutation_run_start(actor=owner, version=version)
    corpora = Corpus.objects.count()

    with pytest.raises(services.ValidationError) as error:
        services.proposal_add(actor=owner, run=run, mutant_key=SURVIVOR)

    assert "is for decision type 'refund.eligibility', not 'buildings.occupancy'" in str(
        error.value
    )
    assert Corpus.objects.count() == corpora
    assert not Scenario.objects.filter(name=PROPOSED).exists()


def test_starting_while_a_run_is_active_or_without_scenarios_is_refused(
    engine, as_owner, owner, version, occupancy, catalogue_manager
):
    MutationRun.objects.create(decision_type=occupancy, version=version, started_by=owner)
    busy = as_owner.post(start_url(version))
    assert busy.status_code == 422
    assert "is already being computed" in busy.text
    assert MutationRun.objects.count() == 1

    from contracts import demo

    empty = demo.create_contract(
        demo.DemoContract(
            key="buildings.empty", title="Nothing yet", description="", purposes=("p",),
            propositions=(demo.DemoProposition("permit_valid", ("city_permit",), ""),),
        ),
        owner=owner, reviewers=(), viewers=(),
    )  # fmt: skip
    url = reverse("version_strength_start", kwargs={"key": empty.key, "number": 1})
    refused = as_owner.post(url)
    assert refused.status_code == 422
    assert services.NO_SCENARIOS in refused.text


@pytest.mark.parametrize(
    ("text", "html"),
    [
        (
            "if `permit_valid` became optional",
            "if <code><bdi>permit_valid</bdi></code> became optional",
        ),
        ("`<b>x</b>` & y", "<code><bdi>&lt;b&gt;x&lt;/b&gt;</bdi></code> &amp; y"),
        ("an unpaired ` stays", "an unpaired ` stays"),
    ],
)
def test_the_engines_words_are_escaped_with_names_as_code(text, html):
    from scenarios.selectors import strength

    assert strength.code_spans(text) == html
