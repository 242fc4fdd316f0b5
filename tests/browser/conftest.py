"""Playwright's sync API driving Debian's Chromium against pytest-django's live server.

Playwright's sync API keeps an event loop running in the test's thread while a browser is
open, and Django refuses database access from a thread with a running loop unless
DJANGO_ALLOW_ASYNC_UNSAFE is set. It is set only while this module's browser is open.
"""

from __future__ import annotations

import pytest

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        with sync_playwright() as playwright:
            chromium = playwright.chromium.launch(
                executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS
            )
            yield chromium
            chromium.close()


@pytest.fixture
def new_page(browser):
    contexts = []

    def make(**options):
        context = browser.new_context(**options)
        context.set_default_timeout(10_000)
        contexts.append(context)
        return context.new_page()

    yield make
    for context in contexts:
        context.close()


@pytest.fixture
def sign_in(live_server):
    def do(page, username: str) -> None:
        page.goto(live_server.url + "/sign-in/")
        page.get_by_label("Username").fill(username)
        page.get_by_label("Password").fill(f"{username}-password")
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url(live_server.url + "/")

    return do


@pytest.fixture
def create_key_in_page(live_server):
    """The signed-in person creates their signing key in this browser (signing.js: WebCrypto
    Ed25519, non-extractable, kept in IndexedDB); returns the key id the workbench shows."""

    def do(page) -> str:
        from playwright.sync_api import expect

        page.goto(live_server.url + "/signing-keys/")
        shown = page.locator("#my-key-id")
        before = shown.inner_text() if shown.count() else None  # a key made elsewhere
        if before is not None:
            # Replacing a key retires it: the page asks the person to confirm first.
            page.locator("input[data-retire-confirm]").check()
        page.get_by_role("button", name="Create a key in this browser").click()
        # Wait for the page the registration answers with (a new key id), not the old one.
        if before is None:
            expect(shown).to_be_visible()
        else:
            expect(shown).not_to_have_text(before)
        page.wait_for_load_state("load")
        return shown.inner_text()

    return do
