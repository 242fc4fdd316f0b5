"""A malformed query parameter is the client's mistake: 400 with a message naming it, not 404."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from scenarios.models import Scenario

pytestmark = pytest.mark.django_db


@pytest.fixture
def signed_in(client, demo_workspace):
    from scenarios import demo

    demo.load(io.StringIO(), queue_runs=False)
    client.force_login(get_user_model().objects.get(username="olivia"))
    return client


def _scenario_url(name: str) -> str:
    scenario = Scenario.objects.filter(decision_type__key="credit.review.continuation").first()
    return reverse(name, kwargs={"key": scenario.decision_type.key, "pk": scenario.pk})


@pytest.mark.parametrize(
    ("name", "query", "parameter"),
    [
        ("scenarios:scenario_detail", "version=abc", "version"),
        ("scenarios:scenario_compare", "version=abc", "version"),
        ("scenarios:scenario_compare", "top_k=five", "top_k"),
        ("version_diff", "from=abc", "from"),
        ("version_diff", "to=1.5", "to"),
    ],
)
def test_a_malformed_query_parameter_answers_400_naming_it(signed_in, name, query, parameter):
    if name == "version_diff":
        url = reverse(name, kwargs={"key": "credit.review.continuation"})
    else:
        url = _scenario_url(name)
    response = signed_in.get(f"{url}?{query}")
    assert response.status_code == 400
    body = response.content.decode()
    assert f"‘{parameter}’" in body and "whole number" in body
    value = query.split("=", 1)[1]
    assert value in body


def test_a_well_formed_but_unknown_version_is_still_not_found(signed_in):
    url = reverse("version_diff", kwargs={"key": "credit.review.continuation"})
    assert signed_in.get(f"{url}?to=99").status_code == 404
    detail = _scenario_url("scenarios:scenario_detail")
    assert signed_in.get(f"{detail}?version=1").status_code == 200
