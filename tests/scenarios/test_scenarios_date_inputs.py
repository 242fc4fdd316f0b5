"""Every date input renders its value as ISO 8601, whatever the locale.

An `<input type=date>` accepts only `YYYY-MM-DD`; a value rendered in the locale's format
(en-gb: `30/08/2026`) shows as blank and the form cannot be saved until the date is typed
again.
"""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db

KEY = "credit.review.continuation"


def date_inputs(page: str) -> dict[str, str]:
    """name → value of every `<input type="date">` on the page."""
    inputs = {}
    for tag in re.findall(r"<input[^>]*>", page):
        if 'type="date"' in tag:
            name = re.search(r'name="([^"]+)"', tag).group(1)
            value = re.search(r'value="([^"]*)"', tag)
            inputs[name] = value.group(1) if value else ""
    return inputs


def test_the_scenario_form_shows_the_stored_decision_date_as_iso(as_owner, scenario):
    page = as_owner.get(
        reverse("scenarios:scenario_edit", kwargs={"key": KEY, "pk": scenario.pk})
    ).content.decode()
    assert date_inputs(page) == {"decision_date": "2026-08-30"}


def test_the_scenario_form_shows_delegation_dates_as_iso(as_owner, owner, scenario):
    from scenarios import services

    services.scenario_update(
        actor=owner,
        scenario=scenario,
        corpus=scenario.corpus,
        delegation={
            "service": "svc",
            "on_behalf_of": "maya",
            "scopes": ["credit_analyst"],
            "valid_from": "2026-01-02",
            "valid_to": "2026-12-31",
        },
    )
    page = as_owner.get(
        reverse("scenarios:scenario_edit", kwargs={"key": KEY, "pk": scenario.pk})
    ).content.decode()
    assert "&quot;valid_from&quot;: &quot;2026-01-02&quot;" in page
    assert "&quot;valid_to&quot;: &quot;2026-12-31&quot;" in page


def test_the_candidate_form_shows_valid_from_and_valid_to_as_iso(as_owner, owner, corpus):
    from scenarios import services

    row = corpus.candidates.get(candidate_id="rm-note-N7")
    services.candidate_save(
        actor=owner,
        corpus=corpus,
        data=row.data | {"valid_from": "2026-01-02", "valid_to": "2026-10-11"},
        original_id=row.candidate_id,
    )
    page = as_owner.get(
        reverse(
            "scenarios:candidate_edit",
            kwargs={"key": KEY, "pk": corpus.pk, "candidate_id": "rm-note-N7"},
        )
    ).content.decode()
    assert date_inputs(page) == {"valid_from": "2026-01-02", "valid_to": "2026-10-11"}


def test_a_bound_form_that_failed_keeps_the_typed_date_as_iso(as_owner, scenario):
    """A form redisplayed with an error keeps the date the browser posted."""
    response = as_owner.post(
        reverse("scenarios:scenario_edit", kwargs={"key": KEY, "pk": scenario.pk}),
        {"name": "", "decision_date": "2026-10-11"},
    )
    assert response.status_code == 422
    assert date_inputs(response.content.decode())["decision_date"] == "2026-10-11"


def test_every_date_field_of_every_form_uses_the_iso_widget():
    """No date input in the app is left on the locale's format."""
    from django import forms as django_forms

    from workbench.forms import scenarios as forms

    found = []
    for form_class in (forms.ScenarioForm, forms.CandidateForm):
        for name, field in form_class.base_fields.items():
            if isinstance(field, django_forms.DateField):
                found.append(name)
                assert isinstance(field.widget, forms.IsoDateInput), name
                assert field.widget.format_value(dt.date(2026, 10, 11)) == "2026-10-11"
    assert sorted(found) == ["decision_date", "valid_from", "valid_to"]
