"""A bundle's tests hold for the version they ship with: publishing (and drafting the
publication statement, before the owner signs) refuses a bundle whose scenarios'
expectations fail for its own contract, naming each scenario and expectation."""

from __future__ import annotations

import datetime as dt

import pytest
from django.core.exceptions import ValidationError

from compiler_tools import failing_expectations, load_tests, run_tests
from contracts import roles, selectors, services
from contracts.models import Bundle
from publishing import review
from scenarios import services as scenario_services
from scenarios.models import Scenario

pytestmark = pytest.mark.django_db


@pytest.fixture
def lab(owner, reviewer, catalogue, devices):
    """A lab's sample release, version 1: a facility record signs a sample off."""
    decision_type = services.decision_type_create(
        actor=owner, key="lab.sample.release", title="Sample release", purposes=["release"]
    )
    services.access_grant(
        actor=owner, decision_type=decision_type, user=reviewer, role=roles.Role.REVIEWER
    )
    version = selectors.current_version(decision_type=decision_type)
    services.proposition_add(
        actor=owner, version=version, expected_lock_version=version.lock_version,
        key="sample_signed", accepted_classes=["facility_record"],
    )  # fmt: skip
    corpus = scenario_services.corpus_import(
        actor=owner, decision_type=decision_type, name="bench",
        document={"candidates": [{
            "id": "rec-1", "entity": "S1", "allowed_roles": ["technician"],
            "allowed_purposes": ["release"], "evidence_class": "facility_record",
            "supports": ["sample_signed"], "valid_from": "2026-01-01", "tokens": 10,
            "relevance": 0.8, "content": "Sample S1 signed off.",
        }]},
    )  # fmt: skip
    Scenario.objects.create(
        decision_type=decision_type, corpus=corpus, name="Sample S1 released", position=0,
        principal="tam", roles=["technician"], purpose="release", entity="S1",
        decision_date=dt.date(2026, 6, 1), token_budget=500,
        expected_slots={"sample_signed": "supported"}, created_by=owner,
    )  # fmt: skip
    for person in (owner, reviewer):
        devices.ensure(person)
    return decision_type


def _through_review(version, owner, reviewer, devices):
    version.refresh_from_db()
    version = review.version_submit(
        actor=owner, version=version, expected_lock_version=version.lock_version
    )
    report = review.report_for(version)
    devices.approve(
        actor=type(reviewer).objects.get(pk=reviewer.pk), version=version,
        report_sha256=report.sha256, acknowledged_widenings=report.widening_ids,
    )  # fmt: skip
    version.refresh_from_db()
    return version


def _bundle_files(tmp_path, version):
    """The version's bundle and its test suite, as files `evidence-compiler test` reads."""
    bundle = Bundle.objects.get(version=version)
    path, suite = tmp_path / f"v{version.number}.json", tmp_path / f"v{version.number}.tests.json"
    path.write_bytes(bundle.data)
    suite.write_bytes(bundle.test_suite.data)
    return {"path": path, "tests": suite}


def test_a_bundle_whose_expectations_fail_for_its_version_is_not_published(
    lab, owner, reviewer, devices, tmp_path
):
    first = _through_review(selectors.current_version(decision_type=lab), owner, reviewer, devices)
    devices.publish(actor=owner, version=first)
    # The published bundle's own tests hold: what `evidence-compiler test BUNDLE` runs.
    assert run_tests(load_tests(**_bundle_files(tmp_path, first))).passed

    # Version 2 lets only a committee record sign a sample off: the scenario still expects
    # the facility record to, an expectation written for version 1.
    second = services.version_start_draft(actor=owner, decision_type=lab)
    proposition = second.propositions.get(key="sample_signed")
    services.accepted_class_add(
        actor=owner, proposition=proposition, expected_lock_version=second.lock_version,
        class_key="committee_record",
    )  # fmt: skip
    second.refresh_from_db()
    services.accepted_class_remove(
        actor=owner, proposition=proposition, expected_lock_version=second.lock_version,
        class_key="facility_record",
    )  # fmt: skip
    second = _through_review(second, owner, reviewer, devices)
    expected = (
        "Version 2's bundle carries 1 scenario whose expectations do not hold for it: "
        "'Sample S1 released' (slot sample_signed: expected supported, got unknown). Update "
        "their expectations (Take the current result as expected on each scenario's page, or "
        "the contract tests exported for version 2) before publishing: a bundle's tests must "
        "hold for the version it ships."
    )
    # The owner learns it before signing: drafting the publication statement refuses too.
    with pytest.raises(ValidationError) as caught:
        review.publication_draft(actor=owner, version=second)
    assert caught.value.messages == [expected]
    with pytest.raises(ValidationError) as caught:
        devices.publish(actor=owner, version=second)
    assert caught.value.messages == [expected]
    second.refresh_from_db()
    assert second.status == "approved"
    assert not Bundle.objects.filter(version=second).exists()

    # Updated for version 2 (and approved again, for the bundle carries the expectations):
    # now it publishes, and its tests hold.
    second = review.version_withdraw(
        actor=owner, version=second, expected_lock_version=second.lock_version
    )
    scenario = Scenario.objects.get(decision_type=lab)
    scenario_services.scenario_update(
        actor=owner, scenario=scenario, corpus=scenario.corpus,
        expected_slots={"sample_signed": "unknown"},
    )  # fmt: skip
    second = _through_review(second, owner, reviewer, devices)
    devices.publish(actor=owner, version=second)
    tests = load_tests(**_bundle_files(tmp_path, second))
    assert failing_expectations(tests) == []
    assert run_tests(tests).passed


def test_the_tests_drafting_the_statement_passed_are_not_run_again_to_publish_it(
    lab, owner, reviewer, devices, monkeypatch
):
    from publishing.review import bundles

    ran = []
    real = bundles.failing_expectations
    monkeypatch.setattr(bundles, "failing_expectations", lambda t: ran.append(1) or real(t))
    monkeypatch.setattr(bundles, "_PASSED", {})
    first = _through_review(selectors.current_version(decision_type=lab), owner, reviewer, devices)
    devices.publish(actor=owner, version=first)  # drafts the statement, then publishes

    assert len(ran) == 1 and Bundle.objects.filter(version=first).exists()


@pytest.fixture
def lab_v2_draft(lab, owner, reviewer, devices):
    """Version 1 published; version 2 a draft in which only a committee record signs off."""
    first = _through_review(selectors.current_version(decision_type=lab), owner, reviewer, devices)
    devices.publish(actor=owner, version=first)
    second = services.version_start_draft(actor=owner, decision_type=lab)
    proposition = second.propositions.get(key="sample_signed")
    services.accepted_class_add(
        actor=owner, proposition=proposition, expected_lock_version=second.lock_version,
        class_key="committee_record",
    )  # fmt: skip
    second.refresh_from_db()
    services.accepted_class_remove(
        actor=owner, proposition=proposition, expected_lock_version=second.lock_version,
        class_key="facility_record",
    )  # fmt: skip
    return lab


def test_the_contract_tests_export_takes_a_version(lab_v2_draft, tmp_path):
    import io

    from django.core.management import CommandError, call_command

    call_command("export_contract_tests", "lab.sample.release", str(tmp_path / "v1"),
                 "--version", "1", stdout=io.StringIO())  # fmt: skip
    call_command("export_contract_tests", "lab.sample.release", str(tmp_path / "current"),
                 stdout=io.StringIO())  # fmt: skip
    v1 = load_tests(tmp_path / "v1")
    assert v1.contract.version == "1" and failing_expectations(v1) == []
    current = load_tests(tmp_path / "current")
    assert current.contract.version == "2"
    assert failing_expectations(current) == [
        ("Sample S1 released", ["slot sample_signed: expected supported, got unknown"])
    ]
    with pytest.raises(CommandError) as refused:
        call_command("export_contract_tests", "lab.sample.release", str(tmp_path / "v9"),
                     "--version", "9", stdout=io.StringIO())  # fmt: skip
    assert str(refused.value) == (
        "Decision type 'lab.sample.release' has no version 9 (its versions: 1, 2)."
    )
    assert not (tmp_path / "v9").exists()


def test_the_contract_tests_zip_takes_a_version(lab_v2_draft, client, owner, tmp_path):
    import zipfile

    from django.urls import reverse

    client.force_login(owner)
    url = reverse("contract_tests_zip", args=["lab.sample.release"])
    response = client.get(url, {"version": 1})
    assert response.status_code == 200
    assert 'filename="lab.sample.release.v1.contract-tests.zip"' in response["Content-Disposition"]
    (tmp_path / "v1.zip").write_bytes(response.content)
    zipfile.ZipFile(tmp_path / "v1.zip").extractall(tmp_path)
    tests = load_tests(tmp_path / "lab.sample.release")
    assert tests.contract.version == "1" and failing_expectations(tests) == []
    assert client.get(url, {"version": 9}).status_code == 404
    assert client.get(url, {"version": "one"}).status_code == 400
    # The version pages link the zip of their own version.
    page = client.get(reverse("version_detail", args=["lab.sample.release", 2]))
    assert f'{url}?version=2"' in page.content.decode()
