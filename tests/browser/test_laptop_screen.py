"""The workbench on a 1366 × 768 laptop screen: tables keep their words whole, what must
scroll sideways does so in a named region the keyboard can reach, the compiled JSON stays
inside the window, the history is paged, and the accessibility check catches a violation."""

from __future__ import annotations

import io

import pytest

pytestmark = pytest.mark.browser

VIEWPORT = {"width": 1366, "height": 768}

# Each page with a table, as a path built from the workspace.
PAGES = {
    "dashboard": lambda w: "/",
    "catalogue": lambda w: "/source-classes/",
    "editor": lambda w: f"/types/{w['key']}/v1/",
    "versions": lambda w: f"/types/{w['key']}/versions/",
    "suite": lambda w: f"/suite/{w['key']}/",
    "corpus": lambda w: f"/suite/{w['key']}/corpora/{w['corpus']}/",
    "scenario": lambda w: f"/suite/{w['key']}/scenarios/{w['scenario']}/",
    "flip matrix": lambda w: f"/suite/{w['key']}/runs/{w['run']}/",
    "every perturbation": lambda w: f"/suite/{w['key']}/runs/{w['run']}/?show=all",
    "coverage": lambda w: f"/suite/{w['key']}/runs/{w['run']}/coverage/",
    "packet": lambda w: f"/suite/{w['key']}/runs/{w['run']}/results/{w['base']}/",
    "diff": lambda w: f"/suite/{w['key']}/runs/{w['run']}/results/{w['variant']}/diff/",
    "review": lambda w: f"/types/{w['key']}/v1/review/",
    "impact": lambda w: f"/types/{w['key']}/v1/impact/",
}

# The words of every table cell that wrap onto a second line. A word is what lies between
# spaces and hyphens (a line may end after a hyphen, as in print), except a date, which is one
# word; words longer than 30 characters (hashes, ids) may break, as nothing else can hold them.
SPLIT_WORDS = r"""() => {
    const split = [];
    for (const cell of document.querySelectorAll('main td, main th')) {
        const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            for (const match of node.data.matchAll(/\d{4}-\d\d-\d\d|[^\s-]+/g)) {
                if (match[0].length > 30) continue;
                const range = document.createRange();
                range.setStart(node, match.index);
                range.setEnd(node, match.index + match[0].length);
                const lines = new Set([...range.getClientRects()]
                    .filter(rect => rect.width > 0).map(rect => Math.round(rect.top)));
                if (lines.size > 1) split.push(match[0]);
            }
        }
    }
    return [...new Set(split)];
}"""

# Every element that scrolls sideways, and whether it is a named region the keyboard reaches.
SIDEWAYS_SCROLLERS = r"""() => [...document.querySelectorAll('main *')]
    .filter(el => ['auto', 'scroll'].includes(getComputedStyle(el).overflowX))
    .filter(el => el.scrollWidth > el.clientWidth + 1)
    .map(el => ({
        element: el.tagName.toLowerCase() + '.' + el.className,
        region: el.getAttribute('role') === 'region',
        focusable: el.tabIndex === 0,
        named: !!(el.getAttribute('aria-label') || el.getAttribute('aria-labelledby')),
    }))"""


@pytest.fixture
def workspace(atlas, owner):
    """The demo suite (both decision types, their corpora and scenarios) and a finished run."""
    from contracts import demo as contracts_demo
    from contracts import selectors
    from scenarios import demo, services
    from scenarios.models import Corpus, Scenario

    contracts_demo.create_contract(contracts_demo.REFUND_DESK, owner=owner)
    demo.load(io.StringIO(), queue_runs=False)
    scenario = Scenario.objects.filter(decision_type=atlas).first()
    run = services.run_start(actor=owner, version=selectors.current_version(decision_type=atlas))
    results = run.results.filter(scenario=scenario)
    return {
        "key": atlas.key,
        "corpus": Corpus.objects.filter(decision_type=atlas).first().pk,
        "scenario": scenario.pk,
        "run": run.pk,
        "base": results.get(perturbation="").pk,
        "variant": results.exclude(perturbation="").first().pk,
    }


@pytest.fixture
def page(new_page, sign_in, owner):
    page = new_page(viewport=VIEWPORT)
    sign_in(page, "olivia")
    return page


def _on_each_page(page, base_url: str, workspace, script: str) -> dict:
    """What `script` finds on each page; pages where it finds nothing are left out."""
    found = {}
    for name, path in PAGES.items():
        response = page.goto(base_url + path(workspace))
        assert response.status == 200, name
        if result := page.evaluate(script):
            found[name] = result
    return found


def test_no_table_cell_breaks_a_word(live_server, page, workspace):
    assert _on_each_page(page, live_server.url, workspace, SPLIT_WORDS) == {}


def test_what_scrolls_sideways_is_a_named_region_the_keyboard_reaches(live_server, page, workspace):
    scrollers = _on_each_page(page, live_server.url, workspace, SIDEWAYS_SCROLLERS)
    unmarked = {
        name: [s["element"] for s in found if not (s["region"] and s["focusable"] and s["named"])]
        for name, found in scrollers.items()
    }
    assert {name: found for name, found in unmarked.items() if found} == {}


def test_the_verdict_summary_scrolls_to_its_last_column_by_keyboard(live_server, page, workspace):
    from playwright.sync_api import expect

    page.goto(live_server.url + PAGES["flip matrix"](workspace))
    region = page.get_by_role("region", name="Verdicts by proposition and kind of perturbation")
    expect(region).to_contain_text("scrolls sideways")
    last = page.locator("#verdict-summary thead th").last
    hidden = """(el, region) =>
        el.getBoundingClientRect().right > region.getBoundingClientRect().right + 1"""
    # Every kind of perturbation has a column: more than a laptop's width holds.
    assert last.evaluate(hidden, region.element_handle())
    region.focus()
    assert region.evaluate("el => getComputedStyle(el).outlineStyle") != "none"
    for _ in range(40):  # the arrow key scrolls a step at a time
        page.keyboard.press("ArrowRight")
    expect(region).to_have_js_property(
        "scrollLeft", region.evaluate("el => el.scrollWidth - el.clientWidth")
    )
    assert not last.evaluate(hidden, region.element_handle())
    # The proposition each row is about stays in view.
    first = page.locator("#verdict-summary tbody th").first
    assert first.evaluate(
        """(el, region) =>
            el.getBoundingClientRect().left >= region.getBoundingClientRect().left - 1""",
        region.element_handle(),
    )


def test_the_compiled_json_stays_inside_the_window(live_server, page, workspace):
    page.goto(live_server.url + PAGES["editor"](workspace))
    panel = page.get_by_role("region", name="Compiled JSON")
    box = panel.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= VIEWPORT["width"]
    # Its long lines scroll inside it, and the keyboard can scroll it.
    assert panel.evaluate("el => getComputedStyle(el).overflowX") == "auto"
    assert panel.get_attribute("tabindex") == "0"
    assert page.evaluate("document.documentElement.scrollWidth") == VIEWPORT["width"]


def test_the_history_is_paged(live_server, page, workspace):
    from playwright.sync_api import expect

    from contracts.models import AuditEvent

    total = AuditEvent.objects.filter(decision_type__key=workspace["key"]).count()
    assert total > 20
    page.goto(live_server.url + PAGES["editor"](workspace))
    history = page.locator("#history")
    expect(history.locator("ol.history > li")).to_have_count(20)
    first = history.locator("ol.history > li").first.inner_text()
    expect(history.locator(".pager")).to_contain_text(f"Page 1 of {-(-total // 20)}")

    history.get_by_role("link", name="Older changes").click()
    expect(history.locator(".pager")).to_contain_text("Page 2 of")
    expect(history.locator("ol.history > li").first).not_to_have_text(first)
    assert history.locator("ol.history").get_attribute("start") == "21"

    history.get_by_role("link", name="Newer changes").click()
    expect(history.locator(".pager")).to_contain_text("Page 1 of")
    expect(history.locator("ol.history > li").first).to_have_text(first)


def test_the_accessibility_check_fails_with_the_rule_and_the_node(new_page, check_accessible):
    page = new_page(viewport=VIEWPORT)
    page.set_content(
        '<!doctype html><html lang="en"><head><title>t</title></head>'
        '<body><main><h1>t</h1><img src="data:," id="unlabelled"></main></body></html>'
    )
    with pytest.raises(AssertionError, match=r"image-alt \(critical\)") as failure:
        check_accessible(page)
    assert "#unlabelled" in str(failure.value)
