"""Suite strength in a real browser: an owner opens it, sees a mistake no scenario notices,
adds the scenario it proposes, runs it again and sees the mistake caught.

The decision type is the building-control one of `tests/scenarios/strength_domain.py`: its
`permit_valid` accepts two permit registers of the same authority tier, city before county,
and the one scenario pins slot states only, so reversing that precedence survives the
standard suite; the proposal pins the permit the packet keeps.
"""

from __future__ import annotations

import pytest

from tests.scenarios import strength_domain as domain

pytestmark = pytest.mark.browser

PRECEDENCE = "precedence_reversed:permit_valid"


@pytest.fixture
def occupancy(owner, catalogue_manager):
    decision_type, _ = domain.create(owner=owner, catalogue_manager=catalogue_manager)
    return decision_type


def test_an_owner_adds_the_proposed_scenario_and_the_mistake_is_caught(
    live_server, new_page, sign_in, occupancy
):
    from playwright.sync_api import expect

    page = new_page()
    page.set_default_timeout(60_000)  # a run is computed within the request (tests' backend)
    sign_in(page, "olivia")
    page.goto(f"{live_server.url}/types/{domain.KEY}/v1/")
    page.get_by_role("link", name="Suite strength").click()
    expect(page.locator("#strength-none")).to_contain_text("has not been computed")

    page.get_by_role("button", name="Run suite strength").click()

    survivor = page.locator(f'#surviving li[data-key="{PRECEDENCE}"]')
    expect(survivor).to_contain_text("no scenario would notice")
    expect(survivor).to_contain_text("Proposed scenario:")
    expect(page.locator("#strength-score")).to_contain_text("%")
    before = int(page.locator("#count-killed").inner_text())

    survivor.get_by_role("button", name="Add this scenario").click()

    expect(page.locator(".messages")).to_contain_text("Added the scenario")
    expect(page.locator(f'#surviving li[data-key="{PRECEDENCE}"]')).to_contain_text(
        "Added. Run suite strength again"
    )
    expect(page.locator("#strength-outdated")).to_contain_text("scenarios were added")

    page.get_by_role("button", name="Run suite strength again").click()

    expect(page.locator(f'#surviving li[data-key="{PRECEDENCE}"]')).to_have_count(0)
    page.locator("#killed summary").click()
    caught = page.locator(f'#killed li[data-key="{PRECEDENCE}"]')
    expect(caught).to_be_visible()
    expect(caught).to_contain_text("killed by a scenario's expectations")
    # The pinned permit catches this mistake and any other that changes it (never fewer).
    assert int(page.locator("#count-killed").inner_text()) > before
    expect(page.locator("#strength-outdated")).to_have_count(0)
