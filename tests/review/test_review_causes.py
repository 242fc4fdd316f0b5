"""One cause, one decision, and the contract's widenings in the review, on a decision type of
its own (vendor onboarding, tests/review/vendor_onboarding.py): two suppliers' scenarios that
share a cause give one row with its count and both scenarios; one justification covers it;
the refusal to submit names each cause once; the contract's widenings (a class added, a
requirement dropped, a purpose added) are listed and must be acknowledged, and the signed
approval names them."""

from __future__ import annotations

import io
import re

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from vendor_onboarding import SUPPLIERS, accept, create

from compiler_trust import load_public_key, parse_signed_statement, verify_statement
from contracts import services
from contracts.models import ContractVersion, ViolationJustification
from publishing import review

pytestmark = pytest.mark.django_db

SCENARIOS = sorted(f"{name} first order" for name in SUPPLIERS.values())
WEB_PAGE_CAUSE = ["promote_weak", "sanctions_clear", "web_page"]


def fresh(version: ContractVersion) -> ContractVersion:
    version.refresh_from_db()
    return version


def submit(owner, version):
    version = fresh(version)
    return review.version_submit(
        actor=owner, version=version, expected_lock_version=version.lock_version
    )


def justify(owner, version, key, text="Web pages are screened again at payment."):
    operator, proposition, cause = key
    return review.violation_justify(
        actor=owner, version=fresh(version), operator=operator, proposition=proposition,
        cause=cause, text=text,
    )  # fmt: skip


@pytest.fixture
def draft_2(owner, reviewer, catalogue_manager, keys, devices):
    """Version 1 published (no violation, nothing to justify), version 2 started."""
    decision_type = create(owner=owner, reviewer=reviewer, catalogue_manager=catalogue_manager)
    first = decision_type.versions.get(number=1)
    assert review.report_ensure(fresh(first)).verdicts["violations"] == []
    first = submit(owner, first)
    report = review.report_ensure(first)
    devices.approve(actor=reviewer, version=first, report_sha256=report.sha256)
    devices.publish(actor=owner, version=fresh(first))
    return services.version_start_draft(actor=owner, decision_type=decision_type)


def causes(version):
    return review.report_ensure(fresh(version)).verdicts["violations"]


def test_two_scenarios_sharing_a_cause_are_one_row(owner, draft_2):
    accept(owner, draft_2, "sanctions_clear", "web_page")
    (row,) = causes(draft_2)
    assert row["key"] == WEB_PAGE_CAUSE
    assert sorted(row["scenarios"]) == SCENARIOS
    assert row["count"] == len(row["occurrences"]) >= 2
    assert sorted({o["scenario"] for o in row["occurrences"]}) == SCENARIOS
    assert all(o["perturbation"].startswith("promote_weak(") for o in row["occurrences"])
    assert row["relation"] and row["new"] and row["justification"] is None
    assert row["text"].startswith(
        f"promote_weak on 'sanctions_clear', web_page: {row['count']} violation(s) in 2 scenario(s)"
    )


def test_one_justification_covers_the_cause_in_every_scenario(owner, draft_2):
    accept(owner, draft_2, "sanctions_clear", "web_page")
    with pytest.raises(ValidationError) as refused:
        submit(owner, draft_2)
    (message,) = refused.value.messages
    assert "1 cause(s) of violations have no justification" in message
    assert message.count("promote_weak on 'sanctions_clear'") == 1
    justify(owner, draft_2, WEB_PAGE_CAUSE)
    (row,) = causes(draft_2)
    assert row["justification"] == {
        "text": "Web pages are screened again at payment.",
        "author": owner.get_username(),
    }
    assert submit(owner, draft_2).status == ContractVersion.Status.IN_REVIEW
    # Justifying again replaces the words; it never makes a second row.
    assert ViolationJustification.objects.filter(version=draft_2).count() == 1


def test_the_refusal_lists_each_open_cause_once(owner, draft_2):
    accept(owner, draft_2, "sanctions_clear", "web_page")
    accept(owner, draft_2, "insurance_in_force", "web_page")
    rows = causes(draft_2)
    assert sorted(tuple(r["key"]) for r in rows) == [
        ("promote_weak", "insurance_in_force", "web_page"),
        ("promote_weak", "sanctions_clear", "web_page"),
    ]
    assert all(sorted(r["scenarios"]) == SCENARIOS for r in rows)
    action = review.available_actions(owner, fresh(draft_2))[review.SUBMIT]
    assert action.blocked and "2 cause(s) of violations" in action.reason
    justify(owner, draft_2, WEB_PAGE_CAUSE)
    action = review.available_actions(owner, fresh(draft_2))[review.SUBMIT]
    assert action.blocked and "1 cause(s) of violations" in action.reason
    assert "promote_weak on 'insurance_in_force', web_page" in action.reason
    assert "'sanctions_clear'" not in action.reason


def test_a_justification_is_for_a_cause_the_report_has(owner, draft_2):
    accept(owner, draft_2, "sanctions_clear", "web_page")
    for key in (
        ["promote_weak", "sanctions_clear", "screening_result"],  # another class
        ["promote_weak", "insurance_in_force", "web_page"],  # another proposition
        ["contaminate", "sanctions_clear", "web_page"],  # another operator
    ):
        with pytest.raises(ValidationError) as refused:
            justify(owner, draft_2, key)
        assert "nothing to justify" in refused.value.messages[0]
    assert not ViolationJustification.objects.exists()


def test_the_impact_page_shows_one_row_with_its_count_and_scenarios(client, owner, draft_2):
    accept(owner, draft_2, "sanctions_clear", "web_page")
    (row,) = causes(draft_2)
    client.force_login(owner)
    url = reverse("version_impact", args=[draft_2.decision_type.key, draft_2.number])
    page = client.get(url).content.decode()
    assert page.count('<li class="verdict-violation"') == 1
    assert f"{row['count']} violations in 2 scenarios" in page
    for name in SCENARIOS:
        assert f"<bdi>{name}</bdi>" in page
    justify_url = reverse("version_justify", args=[draft_2.decision_type.key, draft_2.number])
    done = client.post(
        justify_url,
        {"operator": "promote_weak", "proposition": "sanctions_clear", "cause": "web_page",
         "text": "Screened again at payment."},
    )  # fmt: skip
    assert done.status_code == 302
    (row,) = causes(draft_2)
    assert row["justification"]["text"] == "Screened again at payment."


def test_the_contract_widenings_are_listed_and_acknowledged_in_the_signed_approval(
    owner, reviewer, devices, draft_2
):
    accept(owner, draft_2, "sanctions_clear", "web_page")
    version = fresh(draft_2)
    proposition = version.propositions.get(key="insurance_in_force")
    services.proposition_update(
        actor=owner, proposition=proposition, expected_lock_version=version.lock_version,
        key="insurance_in_force", description=proposition.description, required=False,
        max_items=proposition.max_items,
    )  # fmt: skip
    version = fresh(draft_2)
    services.version_update_settings(
        actor=owner, version=version, expected_lock_version=version.lock_version,
        purposes=["vendor_onboarding", "spend_analytics"], policy_name=version.policy_name,
        policy_version=version.policy_version, min_relevance=version.min_relevance,
        role_order=version.role_order,
    )  # fmt: skip
    for row in causes(draft_2):
        justify(owner, draft_2, row["key"])
    version = submit(owner, draft_2)
    report = review.report_ensure(version)
    contract_ids = [w["id"] for w in report.widenings if w["source"] == "contract"]
    assert contract_ids == [
        "class_added:sanctions_clear:web_page",
        "requirement_dropped:insurance_in_force",
        "purpose_added:spend_analytics",
    ]
    assert report.widening_ids[: len(contract_ids)] == contract_ids
    assert "3 change(s) to the contract" in " ".join(report.headline)

    items_only = [w for w in report.widening_ids if w not in contract_ids]
    with pytest.raises(ValidationError) as refused:
        devices.approve(
            actor=reviewer, version=version, report_sha256=report.sha256,
            acknowledged_widenings=items_only,
        )  # fmt: skip
    for widening in contract_ids:
        assert widening in refused.value.messages[0]

    approval = devices.approve(
        actor=reviewer, version=version, report_sha256=report.sha256,
        acknowledged_widenings=report.widening_ids,
    )  # fmt: skip
    assert [w["id"] for w in approval.acknowledged_widenings] == report.widening_ids
    signed = parse_signed_statement(
        {"statement": approval.statement, "signature": approval.signature}
    )
    assert list(signed.statement.acknowledged_widenings) == report.widening_ids
    key = review.personal_key(reviewer)
    verify_statement(signed, load_public_key(key.public_key_pem))  # raises if not verifiable


def test_the_review_page_shows_the_causes_to_the_reviewer(client, owner, reviewer, draft_2):
    accept(owner, draft_2, "sanctions_clear", "web_page")
    (row,) = causes(draft_2)
    justify(owner, draft_2, row["key"], text="Screened <again> at payment.")
    version = submit(owner, draft_2)
    review.report_ensure(version)
    client.force_login(reviewer)
    page = client.get(
        reverse("version_review", args=[version.decision_type.key, version.number])
    ).content.decode()
    section = page[page.index('id="review-violations"') : page.index('id="approve"')]
    assert section.count('<li class="verdict-violation"') == 1
    assert f"{row['count']} violations in 2 scenarios" in section
    assert "Screened &lt;again&gt; at payment." in section
    assert 'name="text"' not in section  # the reviewer reads it; only an owner justifies
    assert 'value="class_added:sanctions_clear:web_page"' in page


def review_page(client, person, version) -> str:
    client.force_login(person)
    return client.get(
        reverse("version_review", args=[version.decision_type.key, version.number])
    ).content.decode()


def test_everyone_reading_a_version_in_review_sees_the_justifications(client, owner, draft_2):
    """The owner may not approve their own version, yet the page shows them (and a reviewer
    not yet able to approve) each cause with its justification, read-only."""
    accept(owner, draft_2, "sanctions_clear", "web_page")
    (row,) = causes(draft_2)
    justify(owner, draft_2, row["key"], text="Screened <again> at payment.")
    version = submit(owner, draft_2)
    review.report_ensure(version)
    page = review_page(client, owner, version)
    assert 'id="approve"' not in page
    section = page[page.index('id="review-violations"') :]
    assert (
        "Justified by <bdi>olivia</bdi>: “<bdi>Screened &lt;again&gt; at payment.</bdi>”" in section
    )
    assert 'name="text"' not in section


def test_each_widening_to_acknowledge_is_its_own_line(client, owner, reviewer, draft_2):
    accept(owner, draft_2, "sanctions_clear", "web_page")
    for row in causes(draft_2):
        justify(owner, draft_2, row["key"])
    version = submit(owner, draft_2)
    report = review.report_ensure(version)
    page = review_page(client, reviewer, version)
    fieldset = page[page.index('id="acknowledge-widenings"') : page.index("</fieldset>")]
    items = re.findall(r"<li>(.*?)</li>", fieldset, re.S)
    assert len(items) == len(report.widening_ids) >= 2
    for item, widening in zip(items, report.widening_ids, strict=True):
        assert item.count('type="checkbox"') == 1
        assert f'value="{widening}"' in item
        assert item.strip().startswith("<label") and item.strip().endswith("</label>")


def test_retiring_is_a_separate_confirmed_step_away_from_the_new_bundle(
    client, owner, reviewer, devices, draft_2
):
    version = draft_2.decision_type.versions.get(number=1)
    page = review_page(client, owner, version)
    assert page.index('id="verify-bundle"') < page.index('<details class="retire" id="retire">')
    assert 'class="danger"' not in page[: page.index('<details class="retire"')]
    retire = reverse("version_retire", args=[version.decision_type.key, version.number])
    refused = client.post(retire, {"lock_version": fresh(version).lock_version, "reason": "x"})
    assert refused.status_code == 422
    assert "I mean to retire" in refused.content.decode()
    assert fresh(version).status == "published"
    done = client.post(
        retire, {"lock_version": fresh(version).lock_version, "confirm_retire": "on"}
    )
    assert done.status_code == 302
    assert fresh(version).status == "retired"


def test_the_command_line_approves_a_widening_version_once_each_is_acknowledged(
    owner, reviewer, devices, draft_2
):
    from django.core.management import CommandError, call_command

    accept(owner, draft_2, "sanctions_clear", "web_page")
    for row in causes(draft_2):
        justify(owner, draft_2, row["key"])
    version = submit(owner, draft_2)
    report = review.report_ensure(version)
    ids = report.widening_ids
    assert "class_added:sanctions_clear:web_page" in ids and len(ids) >= 2

    def args(action, *more):
        return [
            "review_version", version.decision_type.key, action, "--version",
            str(version.number), "--user", reviewer.get_username(),
            "--key-dir", str(devices.directory), *more,
        ]  # fmt: skip

    out = io.StringIO()
    call_command(*args("report"), stdout=out)
    for widening in ids:
        assert f"widening {widening}: " in out.getvalue()

    with pytest.raises(CommandError) as refused:
        call_command(*args("approve", "--acknowledge", ids[0]), stdout=io.StringIO())
    assert "Not acknowledged: " + ", ".join(ids[1:]) in str(refused.value)
    with pytest.raises(CommandError, match="lists no widening purpose_added:nope"):
        call_command(*args("approve", "--acknowledge", "purpose_added:nope"), stdout=io.StringIO())
    with pytest.raises(CommandError, match="for approve only"):
        call_command(*args("submit", "--acknowledge-all"), stdout=io.StringIO())
    assert fresh(version).status == "in_review"
    assert not version.approvals.exists()

    out = io.StringIO()
    named = [arg for widening in reversed(ids) for arg in ("--acknowledge", widening)]
    call_command(*args("approve", *named), stdout=out)
    for widening in ids:
        assert f"acknowledging widening {widening}\n" in out.getvalue()
    assert fresh(version).status == "approved"
    (approval,) = version.approvals.all()
    assert [w["id"] for w in approval.acknowledged_widenings] == ids


def test_acknowledge_all_approves_what_the_report_lists(owner, reviewer, devices, draft_2):
    from django.core.management import call_command

    accept(owner, draft_2, "sanctions_clear", "web_page")
    for row in causes(draft_2):
        justify(owner, draft_2, row["key"])
    version = submit(owner, draft_2)
    ids = review.report_ensure(version).widening_ids
    out = io.StringIO()
    call_command(
        "review_version", version.decision_type.key, "approve", "--version", str(version.number),
        "--user", reviewer.get_username(), "--key-dir", str(devices.directory),
        "--acknowledge-all", stdout=out,
    )  # fmt: skip
    assert out.getvalue().count("acknowledging widening ") == len(ids) >= 1
    assert fresh(version).status == "approved"


def describe(owner, version, key, description):
    """The owner edits one field of the draft's proposition `key` (its description)."""
    version = fresh(version)
    proposition = version.propositions.get(key=key)
    services.proposition_update(
        actor=owner, proposition=proposition, expected_lock_version=version.lock_version,
        key=key, description=description, required=proposition.required,
        max_items=proposition.max_items,
    )  # fmt: skip


def test_an_edit_of_the_cause_s_proposition_asks_for_its_justification_again(
    client, owner, draft_2
):
    accept(owner, draft_2, "sanctions_clear", "web_page")
    justify(owner, draft_2, WEB_PAGE_CAUSE, text="Screened again at payment.")
    describe(owner, draft_2, "insurance_in_force", "Cover is in force on the order date.")
    (row,) = causes(draft_2)
    assert row["justification"]["text"] == "Screened again at payment."  # unrelated edit

    describe(owner, draft_2, "sanctions_clear", "Not sanctioned on any list we screen.")
    (row,) = causes(draft_2)
    assert row["justification"] is None
    assert row["earlier_justification"]["text"] == "Screened again at payment."
    with pytest.raises(ValidationError) as refused:
        submit(owner, draft_2)
    assert "promote_weak on 'sanctions_clear', web_page" in refused.value.messages[0]

    client.force_login(owner)
    url = reverse("version_impact", args=[draft_2.decision_type.key, draft_2.number])
    page = client.get(url).content.decode()
    assert (
        "written for an earlier edit of <code><bdi>sanctions_clear</bdi></code>: confirm or "
        "rewrite" in page
    )
    assert re.search(r'<textarea name="text"[^>]*>Screened again at payment\.</textarea>', page)

    justify(owner, draft_2, WEB_PAGE_CAUSE, text="Screened again at payment.")
    (row,) = causes(draft_2)
    assert row["justification"]["text"] == "Screened again at payment."
    assert row["earlier_justification"] is None
    assert submit(owner, draft_2).status == ContractVersion.Status.IN_REVIEW


def test_a_justification_written_before_hashes_were_recorded_still_counts(owner, draft_2):
    accept(owner, draft_2, "sanctions_clear", "web_page")
    justify(owner, draft_2, WEB_PAGE_CAUSE)
    assert ViolationJustification.objects.get().proposition_sha256
    ViolationJustification.objects.update(proposition_sha256="")
    describe(owner, draft_2, "sanctions_clear", "Not sanctioned on any list we screen.")
    assert submit(owner, draft_2).status == ContractVersion.Status.IN_REVIEW
