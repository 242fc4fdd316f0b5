"""Scenarios and runs in a real browser: edit a scenario, watch a run finish."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

KEY = "credit.review.continuation"


@pytest.fixture
def scenario(atlas, owner):
    import datetime as dt
    import json
    from pathlib import Path

    from scenarios import services

    document = json.loads((Path(__file__).parents[2] / "examples" / "atlas.json").read_text())
    corpus = services.corpus_import(
        actor=owner,
        decision_type=atlas,
        name="atlas",
        document={"directory": document["directory"], "candidates": document["candidates"]},
    )
    return services.scenario_create(
        actor=owner,
        decision_type=atlas,
        corpus=corpus,
        name="Maya asks about Atlas",
        principal="maya",
        roles=["credit_analyst"],
        purpose="annual_credit_review",
        entity="Atlas Industries",
        decision_date=dt.date(2026, 10, 11),
        token_budget=760,
        expected_slots={"facility_limit": "supported"},
    )


def test_edit_a_scenario_and_save_without_retyping_the_date(
    live_server, new_page, sign_in, scenario
):
    from playwright.sync_api import expect

    page = new_page()
    sign_in(page, "olivia")
    page.goto(f"{live_server.url}/suite/{KEY}/scenarios/{scenario.pk}/edit/")
    expect(page.get_by_label("Decision date")).to_have_value("2026-10-11")
    page.get_by_label("Token budget").fill("800")
    page.get_by_role("button", name="Save").click()

    expect(page.locator(".messages")).to_contain_text("Saved scenario")
    scenario.refresh_from_db()
    assert scenario.token_budget == 800
    assert scenario.decision_date.isoformat() == "2026-10-11"


def test_a_watched_run_shows_its_matrix_once_and_stops_polling(
    live_server, new_page, sign_in, owner, draft, scenario
):
    from django.utils import timezone
    from playwright.sync_api import expect

    from scenarios import services
    from scenarios.models import SuiteRun

    run = services.run_start(actor=owner, version=draft)
    # As the worker leaves it mid-run: its results will be there once it finishes.
    SuiteRun.objects.filter(pk=run.pk).update(status="running", done=0, heartbeat_at=timezone.now())
    page = new_page()
    polls = []
    page.on(
        "response",
        lambda response: "partial=progress" in response.url and polls.append(response.status),
    )
    sign_in(page, "olivia")
    page.goto(f"{live_server.url}/suite/{KEY}/runs/{run.pk}/")
    expect(page.locator("#progress")).to_contain_text("0 of 1 scenarios")
    page.evaluate("window.sameDocument = true")
    page.wait_for_event("response", lambda response: "partial=progress" in response.url)

    SuiteRun.objects.filter(pk=run.pk).update(status="finished", done=1)
    expect(page.locator("#matrix")).to_be_visible()
    expect(page.locator("#progress")).to_have_count(0)
    # Time for several more polls, had polling not stopped.
    page.wait_for_timeout(3000)
    assert polls[-1] == 286 and polls.count(286) == 1
    assert page.evaluate("window.sameDocument") is True
