"""The main flow by keyboard alone (Tab, Enter, typing): sign in, add a proposition, run the
scenarios and submit the version for review, every control reached showing its focus."""

from __future__ import annotations

import io

import pytest

pytestmark = pytest.mark.browser

VIEWPORT = {"width": 1366, "height": 768}


@pytest.fixture
def workspace(atlas, owner):
    from contracts import demo as contracts_demo
    from scenarios import demo

    contracts_demo.create_contract(contracts_demo.REFUND_DESK, owner=owner)
    demo.load(io.StringIO(), queue_runs=False)
    return atlas


def tab_to(page, selector: str, limit: int = 300) -> None:
    """Press Tab until the element `selector` names has the focus, and check it shows it."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate("s => document.activeElement?.matches(s) ?? false", selector):
            break
    else:
        raise AssertionError(f"Tab never reached {selector}")
    outline = page.evaluate(
        """() => {
            const style = getComputedStyle(document.activeElement);
            return document.activeElement.matches(':focus-visible')
                && style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2;
        }"""
    )
    assert outline, f"{selector} has the focus but shows no outline"


def test_sign_in_add_a_proposition_run_and_submit_by_keyboard(
    live_server, new_page, check_accessible, workspace
):
    from playwright.sync_api import expect

    from contracts.models import ContractVersion

    key = workspace.key
    page = new_page(viewport=VIEWPORT)
    page.goto(live_server.url + "/sign-in/")
    tab_to(page, "input[name=username]")
    page.keyboard.type("olivia")
    tab_to(page, "input[name=password]")
    page.keyboard.type("olivia-password")
    page.keyboard.press("Enter")
    page.wait_for_url(live_server.url + "/")

    # The dashboard's link to the decision type, then its editor's add form.
    tab_to(page, f'main a[href="/types/{key}/"]')
    page.keyboard.press("Enter")
    page.wait_for_url(f"{live_server.url}/types/{key}/")
    tab_to(page, "details.add > summary")
    page.keyboard.press("Enter")
    tab_to(page, "#add-proposition input[name=key]")
    page.keyboard.type("covenant_compliance")
    tab_to(page, "#add-proposition input[name=accepted_classes]")
    page.keyboard.type("facility_record")
    tab_to(page, "#add-proposition button[type=submit]")
    page.keyboard.press("Enter")
    expect(page.locator('tr[data-key="covenant_compliance"]')).to_be_visible()
    check_accessible(page)

    # The suite, through the main navigation, and a run of every scenario.
    tab_to(page, 'nav a[href="/suite/"]')
    page.keyboard.press("Enter")
    page.wait_for_url(f"{live_server.url}/suite/")
    tab_to(page, f'main a[href="/suite/{key}/"]')
    page.keyboard.press("Enter")
    page.wait_for_url(f"{live_server.url}/suite/{key}/")
    tab_to(page, "#run-form button[type=submit]")
    page.keyboard.press("Enter")
    expect(page.locator("#matrix")).to_be_visible()
    check_accessible(page)

    # Back to the contract, and its review card: submitted.
    tab_to(page, f'.crumbs a[href="/types/{key}/"]')
    page.keyboard.press("Enter")
    page.wait_for_url(f"{live_server.url}/types/{key}/")
    tab_to(page, f'nav.subnav a[href="/types/{key}/v1/review/"]')
    page.keyboard.press("Enter")
    page.wait_for_url(f"{live_server.url}/types/{key}/v1/review/")
    tab_to(page, "#review-actions button.primary")
    assert page.evaluate("document.activeElement.textContent.trim()") == "Submit for review"
    page.keyboard.press("Enter")
    expect(page.locator("#review [data-status]")).to_have_attribute("data-status", "in_review")
    check_accessible(page)
    version = ContractVersion.objects.get(decision_type=workspace, number=1)
    assert version.status == "in_review"
    assert version.propositions.filter(key="covenant_compliance").exists()
