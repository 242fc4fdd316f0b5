"""The contract editor in a real browser: htmx swaps, the live panels, and read-only viewers."""

from __future__ import annotations

import json
import re

import pytest

pytestmark = pytest.mark.browser


def editor_url(live_server, draft) -> str:
    return f"{live_server.url}/types/{draft.decision_type.key}/v{draft.number}/"


def test_owner_edits_and_the_panels_follow_without_a_reload(live_server, new_page, sign_in, draft):
    from playwright.sync_api import expect

    page = new_page()
    sign_in(page, "olivia")
    page.goto(editor_url(live_server, draft))
    # Survives htmx swaps, dies with a full page load.
    page.evaluate("window.sameDocument = true")

    page.get_by_text("Add a proposition").click()
    form = page.locator("#add-proposition")
    form.get_by_label("Key").fill("hard_stop")
    form.get_by_label("Accepted classes, by precedence").fill("case_note, committee_record")
    form.get_by_role("button", name="Add proposition").click()

    row = page.locator('tr[data-key="hard_stop"]')
    expect(row).to_be_visible()
    expect(row.locator("li[data-class]")).to_have_count(2)
    lint = page.locator("#lint")
    expect(lint.locator('[data-code="weak_class_accepted"]')).to_contain_text("hard_stop")
    preview = page.locator("#preview pre")
    expect(preview).to_contain_text('"hard_stop"')

    # Classes keep the order typed; give the committee record precedence.
    expect(row.locator("li[data-class]").first).to_have_attribute("data-class", "case_note")
    row.get_by_role("button", name="Raise committee_record precedence for hard_stop").click()
    expect(row.locator("li[data-class]").first).to_have_attribute("data-class", "committee_record")

    def previewed_classes():
        document = json.loads(page.locator("#preview pre").inner_text())
        return next(p for p in document["propositions"] if p["key"] == "hard_stop")[
            "accepted_classes"
        ]

    expect(preview).to_contain_text('"committee_record",\n        "case_note"')
    assert previewed_classes() == ["committee_record", "case_note"]
    expect(page.locator("#history")).to_contain_text(
        "'hard_stop' precedence is now committee_record, case_note"
    )

    # Remove the weak class: the lint warning goes away, still without a reload.
    row.get_by_role("button", name="Stop accepting case_note for hard_stop").click()
    expect(lint.locator('[data-code="weak_class_accepted"]')).to_have_count(0)
    assert page.evaluate("window.sameDocument") is True

    # Each edit answered with its own row; the other rows' forms took the new lock version out
    # of band, so an edit of another row, and the settings, save without a conflict.
    waiver = page.locator('tr[data-key="waiver_valid"]')
    waiver.get_by_role("button", name="Lower approved_waiver precedence for waiver_valid").click()
    expect(waiver.locator("li[data-class]").first).to_have_attribute(
        "data-class", "committee_record"
    )
    settings = page.locator("#settings")
    settings.get_by_label("Min relevance").fill("0.35")
    settings.get_by_role("button", name="Save purposes and policy").click()
    expect(page.locator("#history")).to_contain_text("Changed min relevance")
    expect(page.locator("#editor .conflict")).to_have_count(0)
    assert page.evaluate("window.sameDocument") is True

    draft.refresh_from_db()
    assert draft.propositions.get(key="hard_stop").accepted_classes == ["committee_record"]
    assert draft.propositions.get(key="waiver_valid").accepted_classes[0] == "committee_record"
    assert draft.min_relevance == 0.35


def test_inline_validation_error_without_losing_the_page(live_server, new_page, sign_in, draft):
    from playwright.sync_api import expect

    page = new_page()
    sign_in(page, "olivia")
    page.goto(editor_url(live_server, draft))
    page.evaluate("window.sameDocument = true")
    page.get_by_text("Add a proposition").click()
    form = page.locator("#add-proposition")
    form.get_by_label("Key").fill("waiver_valid")
    form.get_by_role("button", name="Add proposition").click()
    expect(page.locator("#add-proposition .field-error")).to_contain_text("already has")
    assert page.evaluate("window.sameDocument") is True


def test_the_editor_works_without_javascript(live_server, new_page, sign_in, draft):
    from playwright.sync_api import expect

    page = new_page(java_script_enabled=False)
    sign_in(page, "olivia")
    page.goto(editor_url(live_server, draft))
    row = page.locator('tr[data-key="waiver_valid"]')
    row.get_by_role("button", name="Lower approved_waiver precedence for waiver_valid").click()
    expect(row.locator("li[data-class]").first).to_have_attribute("data-class", "committee_record")
    draft.refresh_from_db()
    assert draft.propositions.get(key="waiver_valid").accepted_classes == [
        "committee_record",
        "approved_waiver",
    ]


def test_viewer_has_no_edit_controls_and_a_post_is_refused(live_server, new_page, sign_in, draft):
    from playwright.sync_api import expect

    page = new_page()
    sign_in(page, "vera")
    page.goto(editor_url(live_server, draft))
    expect(page.locator("#editor")).to_contain_text("You can read this contract but not edit it.")
    expect(page.locator("#editor form")).to_have_count(0)
    expect(page.get_by_text("Add a proposition")).to_have_count(0)
    expect(page.get_by_role("button", name=re.compile("precedence"))).to_have_count(0)

    status = page.evaluate(
        """async ([url, lock]) => {
            const token = JSON.parse(document.body.getAttribute("hx-headers"))["x-csrftoken"];
            const body = new URLSearchParams({lock_version: lock, key: "sneaky", max_items: "1"});
            const response = await fetch(url, {
                method: "POST", body, headers: {"X-CSRFToken": token, "HX-Request": "true"},
            });
            return response.status;
        }""",
        [editor_url(live_server, draft) + "propositions/", draft.lock_version],
    )
    assert status == 403
    assert not draft.propositions.filter(key="sneaky").exists()


def test_the_propositions_table_fits_its_card_on_a_laptop_screen(
    live_server, new_page, sign_in, draft
):
    # At 1300 px the two-column workspace leaves the contract card ~750 px: the actions
    # column (Edit ↑ ↓ Delete) and the class pickers used to stick out of the card.
    page = new_page(viewport={"width": 1300, "height": 800})
    sign_in(page, "olivia")
    page.goto(editor_url(live_server, draft))
    card = page.locator("#editor").bounding_box()
    table = page.locator("table.propositions").bounding_box()
    assert table["x"] + table["width"] <= card["x"] + card["width"] + 1
