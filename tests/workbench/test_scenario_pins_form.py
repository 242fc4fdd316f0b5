"""The scenario form's pins on the output, as a policy owner uses them: decision ready as a
three-way select, the blocking propositions as checkboxes, each slot's `required` and resource
ids in the slot table; a pin that does not hold shows in the run's Result column in words,
escaped and isolated; bad input is refused on the form and nothing is saved.

On a decision type of its own (tests/port_clearance.py): a vessel cleared to berth."""

from __future__ import annotations

import re
from html import escape

import pytest
from django.urls import reverse

from scenarios import selectors, services
from scenarios.models import Scenario
from tests import port_clearance as port
from workbench.forms import scenarios as forms

pytestmark = pytest.mark.django_db

PROPOSITIONS = ("hull_certified", "crew_listed", "inspection_clear")


def url(name, **kwargs):
    return reverse(f"scenarios:{name}", kwargs={"key": port.KEY, **kwargs})


@pytest.fixture
def port_type(owner, catalogue_manager):
    return port.make_type(owner=owner, catalogue_manager=catalogue_manager)


@pytest.fixture
def aurora(owner, port_type):
    return port.make_corpus(owner=owner, decision_type=port_type)


@pytest.fixture
def signed_in(client, owner):
    client.force_login(owner)
    return client


def request_form(corpus, **extra):
    return {
        "name": "berth",
        "corpus": corpus.pk,
        "principal": "hm-duty",
        "roles": "harbour_master",
        "purpose": "berth_allocation",
        "entity": "MV Aurora",
        "decision_date": "2026-11-20",
        "token_budget": "1000",
        **extra,
    }


def test_the_form_offers_each_pin_with_its_own_control(signed_in, aurora):
    page = signed_in.get(url("scenario_create")).content.decode()
    select = page.split('name="expected_decision_ready"')[1].split("</select>")[0]
    assert re.findall(r'<option value="([^"]*)"', select) == ["", "ready", "not_ready"]
    assert ">not checked</option>" in select and ">not ready</option>" in select
    for key in PROPOSITIONS:
        assert f'type="checkbox" name="expected_blocking" value="{key}"' in page
        row = page.split(f'<tr data-proposition="{key}">')[1].split("</tr>")[0]
        assert f'name="expect_{key}"' in row and f'name="required_{key}"' in row
        assert f'name="check_resources_{key}"' in row and f'name="resources_{key}"' in row
        assert f"<bdi><code>{key}</code></bdi>" in row
        assert f'<label class="visually-hidden" for="id_required_{key}">Required: {key}' in row


def test_pins_typed_in_the_form_are_saved(signed_in, aurora):
    response = signed_in.post(
        url("scenario_create"),
        request_form(
            aurora,
            expected_decision_ready="not_ready",
            check_blocking="on",
            expected_blocking=["crew_listed"],
            required_crew_listed="required",
            required_inspection_clear="optional",
            check_resources_hull_certified="on",
            resources_hull_certified="cert-C1, insp-P7",
            check_resources_crew_listed="on",  # ticked with none typed: the slot holds nothing
        ),
    )
    assert response.status_code == 302
    scenario = Scenario.objects.get(name="berth")
    assert scenario.expected_decision_ready is False
    assert scenario.expected_blocking == ["crew_listed"]
    assert scenario.expected_required == {"crew_listed": True, "inspection_clear": False}
    assert scenario.expected_resource_ids == {
        "hull_certified": ["cert-C1", "insp-P7"],
        "crew_listed": [],
    }
    page = signed_in.get(url("scenario_detail", pk=scenario.pk)).content.decode()
    assert "Decision: not ready" in page
    assert "Blocked by exactly: <bdi><code>crew_listed</code></bdi>" in page
    assert (
        "<bdi><code>hull_certified</code></bdi> rests on <bdi>cert-C1</bdi>, <bdi>insp-P7</bdi>"
    ) in page


def test_the_edit_form_shows_the_pins_as_saved(signed_in, owner, port_type, aurora):
    scenario = services.scenario_create(
        actor=owner, decision_type=port_type, corpus=aurora, name="berth",
        **port.request_fields(expected_decision_ready=True, expected_blocking=[],
                              expected_required={"hull_certified": True},
                              expected_resource_ids={"crew_listed": ["manifest-M2"]}),
    )  # fmt: skip
    page = signed_in.get(url("scenario_edit", pk=scenario.pk)).content.decode()
    assert '<option value="ready" selected>ready</option>' in page
    assert re.search(r'<input type="checkbox" name="check_blocking"[^>]* checked', page)
    assert not re.search(r'name="expected_blocking" value="[a-z_]+"[^>]* checked', page)
    assert '<option value="required" selected>required</option>' in page
    assert re.search(r'name="check_resources_crew_listed"[^>]* checked', page)
    assert 'name="resources_crew_listed" value="manifest-M2"' in page


def test_ids_typed_without_ticking_check_are_refused_and_nothing_is_saved(signed_in, aurora):
    response = signed_in.post(
        url("scenario_create"),
        request_form(aurora, resources_hull_certified="cert-C1", expected_blocking=["crew_listed"]),
    )
    assert response.status_code == 422
    page = response.content.decode()
    assert escape(forms.UNCHECKED_RESOURCES.format(key="hull_certified")) in page
    assert escape(forms.UNCHECKED_BLOCKING) in page
    assert not Scenario.objects.exists()


def test_a_duplicate_resource_id_is_refused_naming_the_slot(signed_in, aurora):
    response = signed_in.post(
        url("scenario_create"),
        request_form(
            aurora, check_resources_hull_certified="on", resources_hull_certified="cert-C1, cert-C1"
        ),
    )
    assert response.status_code == 422
    assert escape("Resource ids of 'hull_certified': 'cert-C1' is listed twice.") in (
        response.content.decode()
    )
    assert not Scenario.objects.exists()


def test_a_failed_pin_shows_in_the_result_column_escaped_and_isolated(
    signed_in, owner, port_type, aurora
):
    services.scenario_create(
        actor=owner, decision_type=port_type, corpus=aurora, name="berth",
        **port.request_fields(expected_decision_ready=False,
                              expected_resource_ids={"hull_certified": ["<i>forged</i>"]}),
    )  # fmt: skip
    version = selectors.version_for(decision_type=port_type, number=None)
    response = signed_in.post(url("run_start"), {"version": version.number})
    run = version.suite_runs.get()
    assert run.summary["failures"] == 2
    page = signed_in.get(url("run_detail", pk=run.pk)).content.decode()
    result = page.split('<tr class="base">')[1].split("</tr>")[0]
    assert "The decision should not be ready; it is ready." in result
    assert (
        "<bdi>hull_certified</bdi> should rest on <bdi>&lt;i&gt;forged&lt;/i&gt;</bdi>, in that "
        "order; it rests on <bdi>cert-C1</bdi> and <bdi>insp-P7</bdi>."
    ) in result
    assert "<i>forged</i>" not in page
    assert response.status_code == 302
