"""Review and publishing in a real browser: the owner submits, the reviewer approves with the
impact report, the owner publishes and downloads the signed bundle. The owner never sees an
approve button on their own version."""

from __future__ import annotations

import io

import pytest

pytestmark = pytest.mark.browser


@pytest.fixture
def review_workspace(atlas, owner, reviewer):
    from contracts import demo as contracts_demo
    from scenarios import demo

    contracts_demo.create_contract(contracts_demo.REFUND_DESK, owner=owner)
    demo.load(io.StringIO(), queue_runs=False)
    return atlas


def test_submit_approve_publish_download(
    live_server, new_page, sign_in, create_key_in_page, review_workspace
):
    from playwright.sync_api import expect

    from compiler_trust import verify_bundle
    from contracts.models import Bundle
    from publishing import signing

    key = review_workspace.key
    review_url = f"{live_server.url}/types/{key}/v1/review/"
    impact_url = f"{live_server.url}/types/{key}/v1/impact/"

    # The owner submits version 1 (an htmx swap of the review card).
    owner = new_page()
    sign_in(owner, "olivia")
    create_key_in_page(owner)
    owner.goto(review_url)
    owner.evaluate("window.sameDocument = true")
    owner.get_by_role("button", name="Submit for review").click()
    card = owner.locator("#review")
    expect(card.locator("[data-status]")).to_have_attribute("data-status", "in_review")
    expect(card.locator("#own-version-note")).to_be_visible()
    assert owner.evaluate("window.sameDocument") is True

    # The owner reads the impact report but cannot approve their own version.
    owner.goto(impact_url)
    expect(owner.locator("#headline")).to_contain_text("first published contract")
    expect(owner.locator("#approve")).to_have_count(0)
    expect(owner.get_by_role("button", name="Approve version 1 with this report")).to_have_count(0)

    # The reviewer reads the report and approves it.
    reviewer = new_page()
    sign_in(reviewer, "rafael")
    create_key_in_page(reviewer)
    reviewer.goto(impact_url)
    expect(reviewer.locator("#report-sha256")).to_have_text(
        reviewer.locator('#approve input[name="report_sha256"]').get_attribute("value")
    )
    reviewer.get_by_label("Comment (optional)").fill("Matches the seed's expectations.")
    reviewer.get_by_role("button", name="Approve version 1 with this report").click()
    reviewer.wait_for_url(review_url)
    expect(reviewer.locator("[data-status]")).to_have_attribute("data-status", "approved")
    expect(reviewer.locator('#approvals li[data-reviewer="rafael"]')).to_contain_text(
        "Matches the seed's expectations."
    )
    expect(reviewer.get_by_role("button", name="Publish version 1")).to_have_count(0)

    # The owner publishes; the card shows the bundle and who signed it with which key.
    owner.goto(review_url)
    owner.get_by_role("button", name="Publish version 1").click()
    card = owner.locator("#review")
    expect(card.locator("[data-status]")).to_have_attribute("data-status", "published")
    bundle = Bundle.objects.get()
    expect(card.locator("#bundle-sha256")).to_have_text(bundle.sha256)
    for signer, person in (("olivia", "olivia"), ("rafael", "rafael")):
        key_id = next(k.key_id for k in signing.all_keys() if k.user.get_username() == person)
        expect(card.locator(f'tr[data-signer="{signer}"]')).to_contain_text(key_id)

    # The download is the stored bundle, byte for byte, and it verifies.
    with owner.expect_download() as info:
        card.locator("#download-bundle").click()
    download = info.value
    assert download.suggested_filename == f"{key}-v1.bundle.json"
    with open(download.path(), "rb") as file:
        data = file.read()
    assert data == bundle.data
    verified = verify_bundle(data, signing.trusted_public_keys(), key_owners=signing.key_owners())
    assert verified.manifest.approver_names == ("rafael",)
