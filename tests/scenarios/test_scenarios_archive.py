"""Archiving instead of deleting, restoring and cloning, through the pages, on a domain of our
own (building control: may flat 12 be occupied?)."""

from __future__ import annotations

import html

import pytest
from django.test import Client
from django.urls import reverse

from contracts.models import AuditEvent
from publishing import contract_files
from scenarios import selectors, services
from scenarios.models import Scenario, SuiteRun
from tests.scenarios import strength_domain as domain
from workbench.views import archive as archive_views

KEY = domain.KEY


@pytest.fixture
def occupancy(owner, catalogue_manager, viewer):
    decision_type, _ = domain.create(
        owner=owner, catalogue_manager=catalogue_manager, viewers=[viewer]
    )
    return decision_type


@pytest.fixture
def flat(occupancy):
    return occupancy.scenarios.get(name=domain.SCENARIO)


@pytest.fixture
def pool(occupancy):
    return occupancy.corpora.get(name=domain.CORPUS)


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def url(name, **kwargs):
    return reverse(f"scenarios:{name}", kwargs={"key": KEY, **kwargs})


def section(page: str, start: str, end: str) -> str:
    return page.split(start, 1)[1].split(end, 1)[0]


def suite_page(client) -> str:
    return client.get(url("suite")).content.decode()


def test_a_viewer_can_archive_restore_or_clone_nothing(occupancy, flat, pool, viewer, owner):
    client = signed_in(viewer)
    page = client.get(url("scenario_detail", pk=flat.pk)).content.decode()
    assert "Archive" not in page and "Clone" not in page
    for name, kwargs in (
        ("scenario_archive", {"pk": flat.pk}),
        ("scenario_clone", {"pk": flat.pk}),
        ("corpus_archive", {"pk": pool.pk}),
        ("candidate_archive", {"pk": pool.pk, "candidate_id": "MEMO-5"}),
    ):
        assert client.post(url(name, **kwargs)).status_code == 403, name
    services.scenario_archive(actor=owner, scenario=flat)
    assert client.post(url("scenario_restore", pk=flat.pk)).status_code == 403
    assert occupancy.scenarios.count() == 1 and occupancy.scenarios.live().count() == 0
    assert not pool.candidates.archived().exists() and pool.archived_at is None
    # Archiving is a change: GET does nothing, and the form posts with a CSRF token.
    owner_client = signed_in(owner)
    assert owner_client.get(url("scenario_restore", pk=flat.pk)).status_code == 405
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(owner)
    assert strict.post(url("scenario_restore", pk=flat.pk)).status_code == 403


def test_an_archived_scenario_leaves_lists_runs_and_exports_and_comes_back(occupancy, flat, owner):
    client = signed_in(owner)
    version = occupancy.versions.get()
    before = services.run_start(actor=owner, version=version, background=False)
    spare = services.scenario_clone(actor=owner, scenario=flat)

    response = client.post(url("scenario_archive", pk=flat.pk), follow=True)
    page = response.content.decode()
    assert html.escape(archive_views.ARCHIVED.format(name=domain.SCENARIO)) in page
    listed = section(page, "scenarios-title", "corpora-title")
    shown = f"<bdi>{domain.SCENARIO}</bdi>"
    assert shown not in listed and f"<bdi>{spare.name}</bdi>" in listed
    archived = page.split('id="archived"')[1]
    assert shown in archived and "Restore" in archived
    assert list(selectors.scenarios(decision_type=occupancy)) == [spare]

    # A suite run compiles only the live scenarios; the run that used it still shows it.
    after = services.run_start(actor=owner, version=version, background=False)
    assert after.total == 1
    assert set(after.results.values_list("scenario_name", flat=True)) == {spare.name}
    old = client.get(url("run_detail", pk=before.pk)).content.decode()
    assert shown in old
    exported = set(contract_files.export_files(occupancy))
    stem = contract_files.file_stem
    assert f"scenarios/{stem(spare.name)}.yaml" in exported
    assert f"scenarios/{stem(domain.SCENARIO)}.yaml" not in exported

    client.post(url("scenario_restore", pk=flat.pk))
    flat.refresh_from_db()
    assert flat.archived_at is None and flat.archived_by is None
    assert set(selectors.scenarios(decision_type=occupancy)) == {flat, spare}
    assert 'id="archived"' not in suite_page(client)
    actions = list(
        AuditEvent.objects.filter(action__in=["scenario.archived", "scenario.restored"])
        .order_by("pk")
        .values_list("action", flat=True)
    )
    assert actions == ["scenario.archived", "scenario.restored"]
    assert SuiteRun.objects.count() == 2


def test_clone_copies_request_corpus_and_expectations_under_a_new_name(occupancy, flat, owner):
    client = signed_in(owner)
    flat.expected_admitted = ["PERMIT-CITY-7", "INSPECTION-22"]
    flat.save()
    response = client.post(url("scenario_clone", pk=flat.pk), follow=True)
    copy = occupancy.scenarios.get(name=f"{domain.SCENARIO} (copy)")
    assert html.escape(archive_views.CLONED.format(name=copy.name)) in response.content.decode()
    assert response.redirect_chain[-1][0] == url("scenario_edit", pk=copy.pk)
    for field in services.SCENARIO_FIELDS:
        if field != "name":
            assert getattr(copy, field) == getattr(flat, field), field
    assert copy.corpus_id == flat.corpus_id and copy.position > flat.position
    # A second clone does not clash with the first.
    client.post(url("scenario_clone", pk=flat.pk))
    assert occupancy.scenarios.filter(name=f"{domain.SCENARIO} (copy 2)").exists()
    assert AuditEvent.objects.filter(summary__startswith="Cloned scenario").count() == 2


def test_a_corpus_in_use_is_not_archived_and_its_users_are_named(occupancy, flat, pool, owner):
    client = signed_in(owner)
    response = client.post(url("corpus_archive", pk=pool.pk), follow=True)
    refused = services.CORPUS_IN_USE.format(corpus=domain.CORPUS, scenarios=f"'{domain.SCENARIO}'")
    assert html.escape(refused) in response.content.decode()
    pool.refresh_from_db()
    assert pool.archived_at is None

    services.scenario_archive(actor=owner, scenario=flat)
    client.post(url("corpus_archive", pk=pool.pk))
    pool.refresh_from_db()
    assert pool.archived_at is not None
    page = suite_page(client)
    assert domain.CORPUS not in section(page, "corpora-title", 'id="archived"')
    assert domain.CORPUS in page.split('id="archived"')[1]
    new_form = client.get(url("scenario_create")).content.decode()
    assert f'value="{pool.pk}"' not in new_form
    # A scenario over an archived corpus is not restored before the corpus is.
    response = client.post(url("scenario_restore", pk=flat.pk), follow=True)
    refused = services.CORPUS_ARCHIVED.format(corpus=domain.CORPUS)
    assert html.escape(refused) in response.content.decode()
    assert Scenario.objects.get(pk=flat.pk).archived_at is not None
    client.post(url("corpus_restore", pk=pool.pk))
    client.post(url("scenario_restore", pk=flat.pk))
    assert list(selectors.scenarios(decision_type=occupancy)) == [flat]
    assert list(selectors.corpora(decision_type=occupancy)) == [pool]


def test_an_archived_candidate_leaves_the_corpus_and_the_compile_and_comes_back(
    occupancy, flat, pool, owner
):
    client = signed_in(owner)
    version = occupancy.versions.get()
    client.post(url("candidate_archive", pk=pool.pk, candidate_id="INSPECTION-22"))
    page = client.get(url("corpus_detail", pk=pool.pk)).content.decode()
    listed, archived = page.split('id="candidates"')[1].split('id="archived-candidates"')
    assert "INSPECTION-22" not in listed and "INSPECTION-22" in archived
    document = selectors.scenario_document(scenario=flat, version=version)
    assert {c.id for c in document.candidates} == {"PERMIT-CITY-7", "PERMIT-COUNTY-3", "MEMO-5"}
    exported = selectors.corpus_export(corpus=pool)
    assert "INSPECTION-22" not in {c["id"] for c in exported["candidates"]}
    sizes = {c.name: c.size for c in selectors.corpora(decision_type=occupancy)}
    assert sizes == {domain.CORPUS: 3}

    client.post(url("candidate_restore", pk=pool.pk, candidate_id="INSPECTION-22"))
    document = selectors.scenario_document(scenario=flat, version=version)
    assert "INSPECTION-22" in {c.id for c in document.candidates}
    assert AuditEvent.objects.filter(action="corpus.candidate_archived").count() == 1
    assert AuditEvent.objects.filter(action="corpus.candidate_restored").count() == 1


def test_the_impact_report_leaves_archived_scenarios_out(occupancy, flat, owner):
    from publishing.impact.report import impact_report

    version = occupancy.versions.get()
    spare = services.scenario_clone(actor=owner, scenario=flat)

    def reported():
        return {
            str(entry.get("name", entry.get("scenario")))
            for entry in impact_report(version).scenarios
        }

    assert reported() == {flat.name, spare.name}
    services.scenario_archive(actor=owner, scenario=flat)
    assert reported() == {spare.name}
