"""A browser against gunicorn with the production profile (DEBUG off, WhiteNoise, strict CSP):
the pages are styled, an htmx edit swaps in place, and the policy blocks nothing."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]

# Collects every Content-Security-Policy violation the page reports, across htmx swaps.
RECORD_VIOLATIONS = """
window.cspViolations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.cspViolations.push(e.violatedDirective + " " + e.blockedURI);
});
"""


def test_styled_pages_and_an_htmx_edit_under_the_policy_with_nothing_blocked(
    production_server, monkeypatch
):
    from playwright.sync_api import expect, sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    url = production_server.url
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS
        )
        try:
            context = chromium.new_context()
            context.set_default_timeout(10_000)
            context.add_init_script(RECORD_VIOLATIONS)
            page = context.new_page()
            console = []
            page.on("console", lambda message: console.append(message.text))

            page.goto(url + "/sign-in/")
            # workbench.css gives the header its dark band; unstyled, it would be transparent.
            header_background = page.locator(".site-header").evaluate(
                "el => getComputedStyle(el).backgroundColor"
            )
            assert header_background not in ("rgba(0, 0, 0, 0)", "transparent")
            page.get_by_label("Username").fill("olivia")
            page.get_by_label("Password").fill("olivia-local-demo")
            page.get_by_role("button", name="Sign in").click()
            page.wait_for_url(url + "/")

            page.goto(url + "/types/credit.review.continuation/v2/")
            page.evaluate("window.sameDocument = true")  # dies with a full page load
            page.get_by_text("Add a proposition").click()
            form = page.locator("#add-proposition")
            form.get_by_label("Key").fill("hard_stop")
            form.get_by_role("button", name="Add proposition").click()
            expect(page.locator('tr[data-key="hard_stop"]')).to_be_visible()
            expect(page.locator("#preview pre")).to_contain_text('"hard_stop"')
            assert page.evaluate("window.sameDocument") is True

            assert page.evaluate("window.cspViolations") == []
            assert [text for text in console if "Content Security Policy" in text] == []
        finally:
            chromium.close()
