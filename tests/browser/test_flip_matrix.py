"""The flip review in a real browser: run the demo suite, read the matrix, open a diff."""

from __future__ import annotations

import io

import pytest

pytestmark = pytest.mark.browser


@pytest.fixture
def demo_suite(atlas, owner):
    from contracts import demo as contracts_demo
    from scenarios import demo

    contracts_demo.create_contract(contracts_demo.REFUND_DESK, owner=owner)
    demo.load(io.StringIO(), queue_runs=False)
    return atlas


def test_run_the_demo_suite_and_click_a_flipped_cell_into_its_diff(
    live_server, new_page, sign_in, demo_suite
):
    from playwright.sync_api import expect

    page = new_page(viewport={"width": 1500, "height": 1000})
    sign_in(page, "olivia")
    page.goto(f"{live_server.url}/suite/{demo_suite.key}/")
    page.get_by_role("button", name="Run the whole suite").click()

    # The test settings run tasks as they are enqueued, so the run has finished.
    matrix = page.locator("#matrix")
    expect(matrix).to_be_visible()
    expect(page.locator("#totals")).to_contain_text("Scenarios 9")
    expect(page.locator("#totals")).to_contain_text("Expectation failures 0")
    base_rows = matrix.locator("tr.base")
    # The first rows; the rest come as the last row scrolls into view.
    expect(matrix.locator("tr.more")).to_have_count(1)
    rows = matrix.locator("table.matrix tbody tr")
    for _ in range(10):  # the demo suite's rows are a few pages
        if not matrix.locator("tr.more").count():
            break
        shown = rows.count()
        matrix.locator("tr.more").scroll_into_view_if_needed()
        expect(rows).not_to_have_count(shown)
    expect(base_rows).to_have_count(9)
    expect(base_rows.first).to_contain_text("Atlas: Maya's annual review")
    # Survives htmx swaps, dies with a full page load.
    page.evaluate("window.sameDocument = true")
    run_url = page.url

    cell = matrix.locator("td.cell.flipped").first
    proposition = cell.get_attribute("data-proposition")
    cell.locator("a").click()

    diff = page.locator("#diff-panel #diff")
    expect(diff).to_be_visible()
    focus = diff.locator("tr.focus")
    expect(focus).to_contain_text(proposition)
    expect(focus).to_contain_text("flipped")
    expect(diff).to_contain_text("Admitted")
    expect(diff).to_contain_text("tokens")
    assert page.evaluate("window.sameDocument") is True
    assert page.url == run_url

    # The same diff is a page of its own without JavaScript.
    href = cell.locator("a").get_attribute("href")
    page.goto(live_server.url + href)
    expect(page.locator("h1")).to_contain_text("against the base")
    expect(page.locator("#diff tr.focus")).to_contain_text(proposition)
