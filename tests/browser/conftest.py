"""Playwright's sync API driving Debian's Chromium against pytest-django's live server.

Playwright's sync API keeps an event loop running in the test's thread while a browser is
open, and Django refuses database access from a thread with a running loop unless
DJANGO_ALLOW_ASYNC_UNSAFE is set. It is set only while this module's browser is open.

Every page a test opens is checked against axe-core's WCAG 2.2 AA rules (`assert_accessible`):
after each `goto`, `reload` and `wait_for_url`, and once more when the test ends, so a page
reached by a click or an htmx swap is checked too. A violation fails the test with its rule
id, help text and the nodes it found.
"""

from __future__ import annotations

import functools

import pytest

# The WCAG 2.0, 2.1 and 2.2 A and AA rules; axe-core's best practices are left out.
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]


def axe_violations(page) -> list[dict]:
    """axe-core's WCAG 2.2 AA violations on the page as it is now (axe-playwright-python
    injects the axe-core it ships)."""
    from axe_playwright_python.sync_playwright import Axe

    options = {"runOnly": {"type": "tag", "values": WCAG_TAGS}, "resultTypes": ["violations"]}
    return Axe().run(page, options=options).response["violations"]


def axe_report(violations: list[dict]) -> str:
    lines = []
    for violation in violations:
        lines.append(f"{violation['id']} ({violation['impact']}): {violation['help']}")
        lines.append(f"  {violation['helpUrl']}")
        for node in violation["nodes"][:5]:
            lines.append(f"  - {' '.join(node['target'])}: {node['html'][:160]}")
            lines.append(f"    {node['failureSummary'].replace(chr(10), ' ')[:300]}")
        if len(violation["nodes"]) > 5:
            lines.append(f"  … and {len(violation['nodes']) - 5} more")
    return "\n".join(lines)


def assert_accessible(page) -> None:
    """Fail with every WCAG 2.2 AA violation axe-core finds on the page as it is now."""
    page.wait_for_load_state("load")
    # Not mid-swap: a panel htmx is refreshing is dimmed (and fades back) until it settles.
    page.wait_for_function(
        "() => !document.querySelector('.htmx-request, .htmx-settling, .htmx-swapping')"
        " && document.getAnimations().every(a => a.playState !== 'running')"
    )
    violations = axe_violations(page)
    assert not violations, f"axe-core on {page.url}:\n{axe_report(violations)}"


@pytest.fixture
def check_accessible():
    """`assert_accessible`, for a test to check a page as it is at one moment (after an htmx
    swap, say)."""
    return assert_accessible


def _checked_after(page, name: str) -> None:
    """Make `page.<name>(…)` check the page it lands on."""
    action = getattr(page, name)

    @functools.wraps(action)
    def checked(*args, **kwargs):
        result = action(*args, **kwargs)
        if page.url.startswith("http"):
            assert_accessible(page)
        return result

    setattr(page, name, checked)


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
    pages = []

    def make(**options):
        context = browser.new_context(**options)
        context.set_default_timeout(10_000)
        contexts.append(context)
        page = context.new_page()
        # axe-core is JavaScript: a page without it is checked where other tests open it.
        if options.get("java_script_enabled", True):
            for name in ("goto", "reload", "wait_for_url"):
                _checked_after(page, name)
            pages.append(page)
        return page

    yield make
    try:
        for page in pages:
            # Each page as the test left it: reached by a click or an htmx swap, maybe.
            if not page.is_closed() and page.url.startswith("http"):
                assert_accessible(page)
    finally:
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
