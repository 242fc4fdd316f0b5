"""Review pages: buttons only for those allowed, refused POSTs otherwise, htmx partials, the
bundle download, the version history, the diff and the public keys."""

from __future__ import annotations

import base64
import html
import json
import re

import pytest
from django.test import Client
from django.urls import reverse

from contracts import roles, services
from contracts.models import Approval, ContractVersion
from publishing import review
from workbench.views import keys as keys_views
from workbench.views import review as review_views

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}


def url(version, name):
    return reverse(name, kwargs={"key": version.decision_type.key, "number": version.number})


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def buttons(page: str) -> set[str]:
    return set(re.findall(r'action="/types/[^"]+/v\d+/([a-z-]+)/"', page))


def signed_form(page: str, form_id: str, devices, person) -> dict[str, str]:
    """The form's hidden fields and the statement it shows, signed with the person's key
    file as `evidence-compiler sign-approval` signs it and pasted into the form."""
    form = re.search(rf'<form[^>]*id="{form_id}"[^>]*>(.*?)</form>', page, re.S).group(1)
    data = {
        html.unescape(name): html.unescape(value)
        for name, value in re.findall(r'type="hidden" name="([^"]+)" value="([^"]*)"', form)
    }
    shown = re.search(r'data-statement="([^"]+)"', form).group(1)
    statement = json.loads(base64.b64decode(shown))
    signed = devices.sign(person, statement)
    data["signed_statement"] = json.dumps(signed.model_dump(mode="json"))
    return data


def test_the_owner_sees_submit_and_the_reviewer_does_not(suite, draft, owner, reviewer, keys):
    assert buttons(signed_in(owner).get(url(draft, "version_review")).content.decode()) == {
        "submit",
        "retire",
    }
    assert buttons(signed_in(reviewer).get(url(draft, "version_review")).content.decode()) == set()


def test_submit_from_the_page_and_with_htmx(suite, draft, owner):
    client = signed_in(owner)
    response = client.post(
        url(draft, "version_submit"), {"lock_version": draft.lock_version}, headers=HTMX
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert page.startswith('\n<section id="review"') or page.lstrip().startswith(
        '<section id="review"'
    )
    assert "HX-Trigger" in response.headers
    draft.refresh_from_db()
    assert draft.status == "in_review"
    # A stale button: 409 with the card, nothing changed.
    response = client.post(url(draft, "version_withdraw"), {"lock_version": 0})
    assert response.status_code == 409
    draft.refresh_from_db()
    assert draft.status == "in_review"


def test_the_owner_sees_no_approve_button_on_their_own_version(submitted, owner, reviewer):
    page = signed_in(owner).get(url(submitted, "version_impact")).content.decode()
    assert 'id="approve"' not in page
    assert (
        'id="own-version-note"'
        in signed_in(owner).get(url(submitted, "version_review")).content.decode()
    )
    page = signed_in(reviewer).get(url(submitted, "version_impact")).content.decode()
    assert 'id="approve"' in page


def test_the_views_refuse_a_post_the_action_would_refuse(submitted, owner, reviewer, viewer):
    report = review.report_for(submitted)
    data = {"report_sha256": report.sha256}
    assert signed_in(owner).post(url(submitted, "version_approve"), data).status_code == 403
    assert signed_in(viewer).post(url(submitted, "version_approve"), data).status_code == 403
    assert (
        signed_in(reviewer).post(url(submitted, "version_publish"), {"lock_version": 1}).status_code
        == 403
    )
    assert not Approval.objects.exists()


def test_approve_records_the_report_the_page_showed(submitted, reviewer, devices):
    client = signed_in(reviewer)
    page = client.get(url(submitted, "version_impact")).content.decode()
    shown = re.search(r'name="report_sha256" value="([0-9a-f]{64})"', page).group(1)
    data = signed_form(page, "approve", devices, reviewer)
    assert data["report_sha256"] == shown
    # Unsigned, nothing is approved: the signature is the reviewer's, made on their side.
    unsigned = client.post(url(submitted, "version_approve"), {"report_sha256": shown})
    assert unsigned.status_code == 422
    assert html.escape(review.NOT_SIGNED) in unsigned.content.decode()
    assert not Approval.objects.exists()
    response = client.post(url(submitted, "version_approve"), data)
    assert response.status_code == 302 and response["Location"] == url(submitted, "version_review")
    approval = Approval.objects.get()
    assert approval.report_sha256 == shown
    assert approval.statement["report_sha256"] == shown and approval.signature
    # A report hash that is not the current one is refused with the reason.
    submitted.refresh_from_db()
    response = client.post(url(submitted, "version_approve"), {**data, "report_sha256": "0" * 64})
    assert response.status_code == 422


def test_request_changes_needs_a_comment(submitted, reviewer):
    client = signed_in(reviewer)
    response = client.post(url(submitted, "version_request_changes"), {"comment": ""}, headers=HTMX)
    assert response.status_code == 422
    response = client.post(
        url(submitted, "version_request_changes"), {"comment": "Say why."}, headers=HTMX
    )
    assert response.status_code == 200
    submitted.refresh_from_db()
    assert submitted.status == "changes_requested"


def test_publish_then_download_the_bundle(approved, owner, viewer, devices):
    client = signed_in(owner)
    page = client.get(url(approved, "version_review")).content.decode()
    assert "publish" in buttons(page)
    data = signed_form(page, "publish", devices, owner)
    assert data["lock_version"] == str(approved.lock_version)
    response = client.post(url(approved, "version_publish"), data)
    assert response.status_code == 302
    approved.refresh_from_db()
    assert approved.status == "published"
    page = signed_in(viewer).get(url(approved, "version_review")).content.decode()
    bundle = approved.bundle
    assert bundle.sha256 in page
    for signature in bundle.document["signatures"]:
        assert signature["key_id"] in page
    assert buttons(page) == set()
    download = signed_in(viewer).get(url(approved, "version_bundle"))
    assert download.status_code == 200
    assert download.content == bundle.data
    assert download["Content-Disposition"] == f'attachment; filename="{bundle.filename}"'


def test_version_history_and_diff(published, owner, viewer):
    version = services.version_start_draft(actor=owner, decision_type=published.decision_type)
    proposition = version.propositions.get(key="review_open")
    services.proposition_update(
        actor=owner,
        proposition=proposition,
        expected_lock_version=version.lock_version,
        key="review_open",
        description="",
        required=False,
        max_items=1,
    )
    client = signed_in(viewer)
    key = published.decision_type.key
    page = client.get(reverse("decision_type_versions", kwargs={"key": key})).content.decode()
    assert 'data-number="2"' in page and 'data-number="1"' in page
    diff = reverse("version_diff", kwargs={"key": key})
    page = client.get(diff).content.decode()
    assert "A gap in &#x27;review_open&#x27; no longer blocks the decision" in page
    fragment = client.get(diff + "?from=2&to=1", headers=HTMX).content.decode()
    assert fragment.lstrip().startswith('<section id="diff"')
    assert "now blocks the decision" in fragment
    assert client.get(diff + "?from=9&to=1").status_code == 404


def test_public_keys_page_registering_rotating_and_revoking_ones_own_key(keys, make_user, tmp_path):
    from compiler_trust import write_key_files
    from contracts.models import AuditAction, AuditEvent
    from publishing import signing
    from workbench.views.keys import KEY_REVOKED

    newcomer = make_user("nia", roles.RISK_REVIEWERS)
    client = signed_in(newcomer)
    page = client.get(reverse("signing_keys")).content.decode()
    assert keys["owner"].key_id in page and keys["reviewer"].key_id in page
    assert "data-keygen-button" in page  # signing.js creates the key in the browser
    first = (write_key_files(tmp_path / "one", "nia")[1]).read_text()
    response = client.post(
        reverse("signing_key_create"), {"public_key": first, "origin": "cli"}, follow=True
    )
    mine = newcomer.signing_keys.get()
    assert review_views.KEY_CREATED.format(key_id=mine.key_id) in response.content.decode()
    assert mine.origin == "cli" and not mine.private_key_encrypted
    # The same key again is refused; a new one rotates the first out (kept, retired).
    response = client.post(
        reverse("signing_key_create"),
        {"public_key": first, "origin": "cli", "retire_current": mine.key_id},
        follow=True,
    )
    assert signing.KEY_REGISTERED.format(key_id=mine.key_id) in response.content.decode()
    second = (write_key_files(tmp_path / "two", "nia")[1]).read_text()
    # Replacing asks first: the page offers the tick box naming the key it retires, and a
    # post without it (or naming another key) registers nothing and says why.
    page = client.get(reverse("signing_keys")).content.decode()
    assert f'name="retire_current" value="{mine.key_id}"' in page
    for confirm in ({}, {"retire_current": "0123456789abcdef"}):
        response = client.post(
            reverse("signing_key_create"),
            {"public_key": second, "origin": "browser", **confirm},
            follow=True,
        )
        refused = keys_views.KEY_RETIRE_UNCONFIRMED.format(key_id=mine.key_id)
        assert html.escape(refused) in response.content.decode()
        assert newcomer.signing_keys.count() == 1 and signing.signing_key(newcomer) == mine
    client.post(
        reverse("signing_key_create"),
        {"public_key": second, "origin": "browser", "retire_current": mine.key_id},
    )
    assert newcomer.signing_keys.count() == 2
    current = signing.signing_key(newcomer)
    assert current.origin == "browser" and current.key_id != mine.key_id
    # Revoking: audited, and the person has no key to sign with until they register one.
    response = client.post(reverse("signing_key_revoke"), {"key_id": current.key_id}, follow=True)
    assert KEY_REVOKED.format(key_id=current.key_id) in response.content.decode()
    assert signing.signing_key(newcomer) is None
    actions = list(
        AuditEvent.objects.filter(
            action__in=[AuditAction.SIGNING_KEY_REGISTERED, AuditAction.SIGNING_KEY_REVOKED]
        ).values_list("action", flat=True)
    )
    assert actions.count(AuditAction.SIGNING_KEY_REVOKED) == 1
    assert actions.count(AuditAction.SIGNING_KEY_REGISTERED) >= 2
    # Nobody revokes someone else's key.
    assert (
        client.post(reverse("signing_key_revoke"), {"key_id": keys["owner"].key_id}).status_code
        == 404
    )


def test_every_hx_post_has_a_real_action(approved, owner, reviewer):
    for person in (owner, reviewer):
        page = signed_in(person).get(url(approved, "version_review")).content.decode()
        for form in re.findall(r"<form[^>]*hx-post[^>]*>", page):
            hx = re.search(r'hx-post="([^"]+)"', form).group(1)
            assert f'action="{hx}"' in form


def test_an_edited_version_in_review_shows_its_voided_approval(approved, owner):
    proposition = approved.propositions.get(key="facility_limit")
    services.proposition_update(
        actor=owner,
        proposition=proposition,
        expected_lock_version=approved.lock_version,
        key="facility_limit",
        description="changed",
        required=True,
        max_items=1,
    )
    page = signed_in(owner).get(url(approved, "version_review")).content.decode()
    assert "voided: version edited" in page
    assert ContractVersion.objects.get(pk=approved.pk).status == "draft"


def test_the_impact_page_of_an_invalid_draft_lists_its_problems(suite, draft, viewer):
    draft.propositions.filter(key="review_open").update(accepted_classes=["x", "x"])
    response = signed_in(viewer).get(url(draft, "version_impact"))
    assert response.status_code == 422
    assert "not a valid contract yet" in response.content.decode()


def test_the_impact_report_partial_for_htmx(submitted, viewer):
    response = signed_in(viewer).get(url(submitted, "version_impact"), headers=HTMX)
    page = response.content.decode()
    assert page.lstrip().startswith('<section id="report"')
    assert 'id="approve"' not in page
    assert review.report_for(submitted).sha256 in page


def test_an_owner_starts_the_next_draft_from_a_published_version_in_the_browser(
    approved, published, owner, viewer
):
    """A published contract is frozen; the editor offers the way to change it: a new draft."""
    published = ContractVersion.objects.get(pk=approved.pk)
    assert published.status == "published"
    editor = reverse("decision_type_detail", kwargs={"key": published.decision_type.key})
    start = reverse("version_start_draft", kwargs={"key": published.decision_type.key})
    page = signed_in(owner).get(editor).content.decode()
    assert f'action="{start}"' in page
    assert f'action="{start}"' not in signed_in(viewer).get(editor).content.decode()
    assert signed_in(viewer).post(start).status_code == 403
    assert published.decision_type.versions.count() == 1

    response = signed_in(owner).post(start)
    new = published.decision_type.versions.get(number=published.number + 1)
    assert response.status_code == 302
    assert response["Location"] == url(new, "version_detail")
    assert (new.status, new.parent_id) == ("draft", published.pk)
    assert list(new.propositions.values_list("key", flat=True)) == list(
        published.propositions.values_list("key", flat=True)
    )
    # While that draft is open there is no second one: the refusal says why.
    client = signed_in(owner)
    response = client.post(start, follow=True)
    assert published.decision_type.versions.count() == 2
    assert services.OPEN_VERSION_EXISTS.format(number=new.number, status="draft") in (
        response.content.decode()
    )
