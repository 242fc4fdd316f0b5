"""A reviewer opens the impact report of a draft with a violation (the demo's version 2, whose
waiver may rest on a case note): the report leads with the one cause of its violations (its
count and scenarios) and the owner's one justification of it; approving without
acknowledging the widenings (the contract's own and the items admitted anew) is refused,
naming them; approving with them records the acknowledgement."""

from __future__ import annotations

import io

import pytest

pytestmark = pytest.mark.browser


@pytest.fixture
def draft_with_violation(atlas, owner, reviewer):
    from contracts import demo as contracts_demo
    from contracts.models import ContractVersion
    from publishing import demo as publishing_demo
    from publishing import review
    from scenarios import demo

    contracts_demo.create_contract(contracts_demo.REFUND_DESK, owner=owner)
    demo.load(io.StringIO(), queue_runs=False)
    publishing_demo.load_review(io.StringIO())
    draft = ContractVersion.objects.get(decision_type=atlas, number=2)
    (cause,) = review.report_for(draft).verdicts["violations"]
    operator, proposition, why = cause["key"]
    review.violation_justify(
        actor=owner, version=draft, operator=operator, proposition=proposition, cause=why,
        text="The RM's notes are countersigned this quarter.",
    )  # fmt: skip
    draft.refresh_from_db()
    return review.version_submit(
        actor=owner, version=draft, expected_lock_version=draft.lock_version
    )


def test_approval_needs_the_widenings_acknowledged(
    live_server, new_page, sign_in, create_key_in_page, draft_with_violation
):
    from playwright.sync_api import expect

    from contracts.models import Approval
    from publishing import review

    version = draft_with_violation
    report = review.report_for(version)
    widenings = report.widening_ids
    assert "class_added:waiver_valid:case_note" in widenings
    (cause,) = report.verdicts["violations"]
    page = new_page()
    sign_in(page, "rafael")
    create_key_in_page(page)  # the approval is signed in this browser
    page.goto(f"{live_server.url}/types/{version.decision_type.key}/v2/impact/")
    rows = page.locator("#violations > li")
    expect(rows).to_have_count(1)
    row = rows.first
    expect(row).to_contain_text("promote_weak on waiver_valid, case_note")
    count = f"{cause['count']} violations in {len(cause['scenarios'])} scenarios"
    expect(row.locator(".cause-count")).to_have_text(count)
    expect(row).to_contain_text("The RM's notes are countersigned this quarter.")
    row.locator("details.occurrences summary").click()
    expect(row.locator("details.occurrences li")).to_have_count(cause["count"])
    expect(row.locator("details.occurrences li").first).to_contain_text(
        "waiver_valid accepts a weak class"
    )
    expect(page.locator("#headline p").first).to_contain_text("1 cause(s) of violations")
    contract_widening = page.locator('#widenings [data-widening="contract"]')
    expect(contract_widening).to_contain_text("'waiver_valid' may now be established by")

    approve = page.get_by_role("button", name="Approve version 2 with this report")
    approve.click()
    expect(page.locator("body")).to_contain_text("needs each widening acknowledged")
    assert not Approval.objects.filter(version=version).exists()

    for box in page.locator('#acknowledge-widenings input[type="checkbox"]').all():
        box.check()
    page.get_by_role("button", name="Approve version 2 with this report").click()
    expect(page.locator("#approvals")).to_contain_text("acknowledging")
    approval = Approval.objects.get(version=version)
    assert [w["id"] for w in approval.acknowledged_widenings] == widenings
