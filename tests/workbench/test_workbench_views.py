"""Views: pages, htmx fragments, inline errors, conflicts, and the no-JavaScript fallbacks."""

from __future__ import annotations

import html
import re

import pytest
from django.test import Client
from django.urls import reverse

from contracts import services
from contracts.models import ContractVersion, DecisionType
from workbench.views.editor import people, propositions

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}


def version_url(draft, name="version_detail", **extra):
    return reverse(name, kwargs={"key": draft.decision_type.key, "number": draft.number, **extra})


def proposition_url(draft, name, key):
    return version_url(draft, name, pk=draft.propositions.get(key=key).pk)


def keys(draft):
    return list(draft.propositions.values_list("key", flat=True))


@pytest.fixture
def as_viewer(client, viewer):
    client.force_login(viewer)
    return client


# --------------------------------------------------------------------------- signing in


def test_sign_in_and_out(client, owner):
    page = client.get(reverse("login"))
    assert page.status_code == 200 and b'name="password"' in page.content
    response = client.post(reverse("login"), {"username": "olivia", "password": "olivia-password"})
    assert response.status_code == 302 and response["Location"] == reverse("dashboard")
    assert client.get(reverse("dashboard")).status_code == 200
    assert client.get(reverse("logout")).status_code == 405
    response = client.post(reverse("logout"))
    assert response["Location"] == reverse("login")
    assert client.get(reverse("dashboard")).status_code == 302


def test_a_wrong_password_is_refused(client, owner):
    response = client.post(reverse("login"), {"username": "olivia", "password": "nope"})
    assert response.status_code == 200 and b'role="alert"' in response.content


# --------------------------------------------------------------------------- dashboard


def test_dashboard_lists_only_what_i_may_see(client, atlas, refund, viewer, other_owner):
    client.force_login(viewer)
    page = client.get(reverse("dashboard")).content.decode()
    assert "credit.review.continuation" in page and "refund.eligibility" not in page
    assert "New decision type" not in page
    client.force_login(other_owner)
    page = client.get(reverse("dashboard")).content.decode()
    assert "refund.eligibility" in page and "credit.review.continuation" not in page
    assert "New decision type" in page


def test_dashboard_shows_the_draft_and_last_change(as_owner, draft):
    page = as_owner.get(reverse("dashboard")).content.decode()
    assert "Draft" in page and f"v{draft.number}" in page
    assert "Made vera viewer of" in page


# --------------------------------------------------------------------------- catalogue
# The catalogue's pages: tests/workbench/test_workbench_catalogue.py.


def test_create_a_decision_type_in_the_browser(as_owner, catalogue, owner):
    response = as_owner.post(
        reverse("decision_type_create"),
        {"key": "loan.top_up", "title": "Top-up", "purposes": "top_up_review, audit"},
    )
    assert response["Location"] == reverse("decision_type_detail", kwargs={"key": "loan.top_up"})
    version = DecisionType.objects.get(key="loan.top_up").versions.get()
    assert version.purposes == ["top_up_review", "audit"]
    assert as_owner.get(response["Location"]).status_code == 200


def test_the_new_type_form_does_not_confirm_another_teams_key(as_owner, other_owner):
    services.decision_type_create(
        actor=other_owner, key="greenhouse.venting", title="Greenhouse: open the vents early"
    )
    response = as_owner.post(
        reverse("decision_type_create"),
        {"key": "greenhouse.venting", "title": "Vents", "purposes": "climate"},
    )
    page = response.content.decode()
    assert response.status_code != 302
    assert "That key cannot be used: choose another." in page
    assert "already" not in page and "Greenhouse: open the vents" not in page


# --------------------------------------------------------------------------- the editor


def test_owner_sees_the_editor_and_every_htmx_action_has_a_plain_twin(as_owner, draft):
    page = as_owner.get(version_url(draft)).content.decode()
    assert 'id="add-proposition"' in page and 'id="settings"' in page
    tags = re.findall(r"<(?:form|a)\b[^>]*\bhx-(?:post|get)=[^>]*>", page, flags=re.S)
    assert len(tags) > 20
    for tag in tags:
        hx = re.search(r'hx-(?:post|get)="([^"]+)"', tag).group(1)
        plain = re.search(r'\b(?:action|href)="([^"]+)"', tag)
        assert plain and plain.group(1) == hx, tag


def test_csrf_is_sent_once_from_the_body(as_owner, draft):
    page = as_owner.get(version_url(draft)).content.decode()
    assert re.search(r"<body hx-headers='\{\"x-csrftoken\": \"[^\"]+\"\}'>", page)
    # django-htmx 1.23 serves htmx.min.js, later versions htmx-2.min.js: either, exactly once.
    assert len(re.findall(r'src="[^"]*/django_htmx/htmx(?:-2)?\.min\.js"', page)) == 1


def test_viewer_sees_no_edit_controls(as_viewer, draft):
    page = as_viewer.get(version_url(draft)).content.decode()
    assert "You can read this contract but not edit it." in page
    assert "hx-post" not in page
    assert page.count('method="post"') == 1  # signing out
    assert "waiver_valid" in page and "What the compiler receives" in page


def test_viewer_post_is_refused(as_viewer, draft):
    response = as_viewer.post(
        version_url(draft, "proposition_add"),
        {"lock_version": draft.lock_version, "key": "sneaky", "max_items": 1},
        headers=HTMX,
    )
    assert response.status_code == 403
    assert "sneaky" not in keys(draft)


@pytest.mark.parametrize("partial", ["lint", "preview", "history"])
def test_htmx_asks_for_a_panel_and_gets_only_the_panel(as_owner, draft, partial):
    url = version_url(draft, f"version_{partial}")
    fragment = as_owner.get(url, headers=HTMX).content.decode().strip()
    assert fragment.startswith(f'<section id="{partial}"')
    assert "<html" not in fragment and "<body" not in fragment
    assert 'hx-trigger="contractChanged from:body"' in fragment
    page = as_owner.get(url).content.decode()
    assert page.startswith("<!doctype html>")


def test_htmx_add_returns_the_propositions_and_announces_the_change(as_owner, draft):
    response = as_owner.post(
        version_url(draft, "proposition_add"),
        {
            "lock_version": draft.lock_version,
            "key": "hard_stop",
            "accepted_classes": "committee_record, approved_waiver",
            "required": "on",
            "max_items": 1,
        },
        headers=HTMX,
    )
    assert response.status_code == 200
    fragment = response.content.decode().strip()
    # The table the new row joins (and the add form, empty again), not the whole editor.
    assert fragment.startswith('<div id="propositions"') and "<html" not in fragment
    assert 'id="settings"' not in fragment
    assert 'data-key="hard_stop"' in fragment
    assert "contractChanged" in response["HX-Trigger"]
    assert draft.propositions.get(key="hard_stop").accepted_classes == [
        "committee_record",
        "approved_waiver",
    ]
    draft.refresh_from_db()
    # Every form the answer holds, and out of band every other form, take the new lock.
    assert set(re.findall(r'name="lock_version" value="(\d+)"', fragment)) == {
        str(draft.lock_version)
    }
    assert fragment.endswith(
        f'<input type="hidden" name="lock_version" value="{draft.lock_version}" '
        'hx-swap-oob="outerHTML:#editor input[name=lock_version]">'
    )


def test_plain_post_redirects_back_to_the_page(as_owner, draft):
    response = as_owner.post(
        version_url(draft, "proposition_add"),
        {"lock_version": draft.lock_version, "key": "hard_stop", "max_items": 1},
    )
    assert response.status_code == 302
    assert response["Location"] == version_url(draft) + "#editor"
    assert "hard_stop" in keys(draft)


def test_invalid_input_comes_back_inline(as_owner, draft):
    response = as_owner.post(
        version_url(draft, "proposition_add"),
        {"lock_version": draft.lock_version, "key": "waiver_valid", "max_items": 1},
        headers=HTMX,
    )
    assert response.status_code == 422
    fragment = response.content.decode()
    assert fragment.strip().startswith('<div id="propositions"')
    assert re.search(
        r'class="field-error"[^>]*>' + re.escape(services.DUPLICATE_PROPOSITION), fragment
    )
    assert '<details class="add" open>' in fragment
    assert keys(draft).count("waiver_valid") == 1


@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "plain"])
def test_a_stale_edit_is_a_conflict_and_overwrites_nothing(as_owner, draft, owner, htmx):
    stale = draft.lock_version
    waiver = draft.propositions.get(key="waiver_valid")
    # Someone else edits the draft after our form was rendered.
    services.proposition_update(
        actor=owner,
        proposition=waiver,
        expected_lock_version=stale,
        key="waiver_valid",
        description="Theirs",
        required=True,
        max_items=1,
    )
    response = as_owner.post(
        proposition_url(draft, "proposition_edit", "waiver_valid"),
        {"lock_version": stale, "key": "waiver_valid", "description": "Mine", "max_items": 1},
        headers=HTMX if htmx else {},
    )
    assert response.status_code == 409
    assert services.STALE_EDIT in response.content.decode()
    if htmx:  # the whole editor as it now is, whichever row the form was in
        assert response.content.decode().strip().startswith('<section id="editor"')
        assert (response["HX-Retarget"], response["HX-Reswap"]) == ("#editor", "outerHTML")
    waiver.refresh_from_db()
    assert waiver.description == "Theirs"


def test_editing_a_proposition_someone_deleted_is_a_conflict(as_owner, draft, owner):
    url = proposition_url(draft, "proposition_edit", "review_open")
    services.proposition_delete(
        actor=owner,
        proposition=draft.propositions.get(key="review_open"),
        expected_lock_version=draft.lock_version,
    )
    response = as_owner.post(url, {"lock_version": 0, "key": "x", "max_items": 1}, headers=HTMX)
    assert response.status_code == 409
    assert propositions.PROPOSITION_GONE in response.content.decode()


def test_inline_edit_form_then_save(as_owner, draft):
    url = proposition_url(draft, "proposition_edit", "review_open")
    fragment = as_owner.get(url, headers=HTMX).content.decode()
    row = draft.propositions.get(key="review_open")
    assert fragment.strip().startswith(f'<tr id="p-{row.pk}"')
    assert f'hx-post="{url}"' in fragment and 'value="review_open"' in fragment
    cancelled = as_owner.get(proposition_url(draft, "proposition_row", "review_open"), headers=HTMX)
    assert cancelled.content.decode().strip().startswith(f'<tr id="p-{row.pk}"')
    assert f'hx-post="{url}"' not in cancelled.content.decode()
    response = as_owner.post(
        url,
        {"lock_version": draft.lock_version, "key": "review_status", "max_items": 2},
        headers=HTMX,
    )
    assert response.status_code == 200
    assert response.content.decode().strip().startswith(f'<tr id="p-{row.pk}"')
    changed = draft.propositions.get(key="review_status")
    assert (changed.required, changed.max_items) == (False, 2)


def test_delete_and_move_propositions(as_owner, draft):
    as_owner.post(
        proposition_url(draft, "proposition_move", "continuation_rule"),
        {"lock_version": draft.lock_version, "direction": "up"},
    )
    assert keys(draft) == ["facility_limit", "review_open", "continuation_rule", "waiver_valid"]
    draft.refresh_from_db()
    as_owner.post(
        proposition_url(draft, "proposition_delete", "review_open"),
        {"lock_version": draft.lock_version},
    )
    assert keys(draft) == ["facility_limit", "continuation_rule", "waiver_valid"]


def test_accepted_classes_reordered_added_and_removed(as_owner, draft):
    def post(name, **data):
        draft.refresh_from_db()
        return as_owner.post(
            proposition_url(draft, name, "waiver_valid"),
            {"lock_version": draft.lock_version, **data},
            headers=HTMX,
        )

    post("accepted_class_move", class_key="committee_record", direction="up")
    post("accepted_class_add", class_key="case_note")
    response = post("accepted_class_remove", class_key="approved_waiver")
    assert response.status_code == 200
    assert draft.propositions.get(key="waiver_valid").accepted_classes == [
        "committee_record",
        "case_note",
    ]
    lint = as_owner.get(version_url(draft, "version_lint"), headers=HTMX).content.decode()
    assert 'data-code="weak_class_accepted"' in lint


def test_add_proposition_keeps_the_precedence_the_owner_gives(as_owner, draft):
    """Not alphabetical, not catalogue order: the order typed is the precedence stored."""
    from workbench.forms import CLASS_LISTED_TWICE, UNAVAILABLE_CLASSES

    def add(key, classes):
        draft.refresh_from_db()
        return as_owner.post(
            version_url(draft, "proposition_add"),
            {"lock_version": draft.lock_version, "key": key, "max_items": 1,
             "accepted_classes": classes},
            headers=HTMX,
        )  # fmt: skip

    add("keel_clear", "committee_record, case_note\napproved_waiver")
    assert draft.propositions.get(key="keel_clear").accepted_classes == [
        "committee_record",
        "case_note",
        "approved_waiver",
    ]
    page = as_owner.get(version_url(draft)).content.decode()
    assert "Accepted classes, by precedence" in page
    # A class not offered, or one given twice, is named on the field and nothing is added.
    for classes, message in (
        ("case_note, hull_survey", UNAVAILABLE_CLASSES.format(keys="hull_survey")),
        ("case_note, committee_record, case_note", CLASS_LISTED_TWICE.format(keys="case_note")),
    ):
        response = add("mast_sound", classes)
        assert html.escape(message) in response.content.decode()
        assert not draft.propositions.filter(key="mast_sound").exists()


def test_accept_another_class_starts_empty_and_refuses_an_empty_choice(as_owner, draft):
    from workbench.forms import CHOOSE_A_CLASS

    page = as_owner.get(version_url(draft)).content.decode()
    select = re.search(r'<select id="accept-\d+" name="class_key" required>\s*<option[^>]*>', page)
    assert select and select.group(0).endswith('<option value="">')
    before = draft.propositions.get(key="waiver_valid").accepted_classes
    draft.refresh_from_db()
    response = as_owner.post(
        proposition_url(draft, "accepted_class_add", "waiver_valid"),
        {"lock_version": draft.lock_version, "class_key": ""},
        headers=HTMX,
    )
    assert CHOOSE_A_CLASS in response.content.decode()
    assert draft.propositions.get(key="waiver_valid").accepted_classes == before


def test_settings_update_and_inline_errors(as_owner, draft):
    url = version_url(draft, "version_settings")
    data = {
        "lock_version": draft.lock_version,
        "purposes": "",
        "policy_name": "default",
        "policy_version": 1,
        "min_relevance": 0.2,
        "role_order": "instruction, task, state, evidence, support, tool",
    }
    assert as_owner.post(url, data, headers=HTMX).status_code == 200
    draft.refresh_from_db()
    assert (draft.purposes, draft.min_relevance) == ([], 0.2)
    lint = as_owner.get(version_url(draft, "version_lint"), headers=HTMX).content.decode()
    assert 'data-code="no_purposes"' in lint
    response = as_owner.post(
        url, {**data, "lock_version": draft.lock_version, "role_order": "task"}, headers=HTMX
    )
    assert response.status_code == 422
    assert "exactly once" in response.content.decode()


def test_contract_json_is_what_the_compiler_receives(as_owner, draft):
    response = as_owner.get(version_url(draft, "version_contract_json"))
    assert response.status_code == 200
    assert response.json() == draft.snapshot
    draft.propositions.filter(key="review_open").update(accepted_classes=["x", "x"])
    response = as_owner.get(version_url(draft, "version_contract_json"))
    assert response.status_code == 422
    assert response.json()["result"] == "invalid"


def test_a_frozen_version_shows_no_edit_controls(as_owner, draft):
    ContractVersion.objects.filter(pk=draft.pk).update(status="in_review")
    page = as_owner.get(version_url(draft)).content.decode()
    editor = page[page.index('<section id="editor"') : page.index('<section id="history"')]
    assert "can no longer be edited" in editor and "hx-post" not in editor


def test_htmx_post_with_the_csrf_header_from_the_page(owner, draft):
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    page = client.get(version_url(draft)).content.decode()
    token = re.search(r'"x-csrftoken": "([^"]+)"', page).group(1)
    url = version_url(draft, "proposition_add")
    data = {"lock_version": draft.lock_version, "key": "hard_stop", "max_items": 1}
    assert client.post(url, data, headers=HTMX).status_code == 403
    response = client.post(url, data, headers={**HTMX, "X-CSRFToken": token})
    assert response.status_code == 200


def test_an_htmx_request_after_the_session_ended_reloads_into_sign_in(client, draft):
    page = version_url(draft)
    response = client.get(
        version_url(draft, "version_lint"),
        headers={**HTMX, "HX-Current-URL": "http://testserver" + page},
    )
    assert response.status_code == 200
    assert response["HX-Redirect"] == reverse("login") + "?next=" + page.replace("/", "%2F")


def test_ids_stay_unique_while_a_row_is_being_edited(as_owner, draft):
    url = proposition_url(draft, "proposition_edit", "waiver_valid")
    page = as_owner.get(url).content.decode()
    ids = re.findall(r'\bid="([^"]+)"', page)
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    assert 'id="edit_key"' in page and 'id="add_key"' in page


def test_load_demo_command_prints_the_local_sign_ins(db):
    import io

    from django.core.management import call_command

    out = io.StringIO()
    call_command("load_demo", stdout=out)
    call_command("load_demo", stdout=out)
    for username in ("olivia", "rafael", "vera", "cora"):
        assert f"{username}-local-demo" in out.getvalue()
    assert DecisionType.objects.count() == 2


def test_no_edit_form_for_a_frozen_version(as_owner, draft):
    ContractVersion.objects.filter(pk=draft.pk).update(status="approved")
    page = as_owner.get(proposition_url(draft, "proposition_edit", "waiver_valid"))
    assert page.status_code == 200
    assert 'id="edit_key"' not in page.content.decode()


# --------------------------------------------------------------------------- people


def people_url(draft, name="decision_type_access"):
    return reverse(name, kwargs={"key": draft.decision_type.key})


def test_owner_gives_and_takes_roles(as_owner, draft, stranger):
    from contracts import roles

    response = as_owner.post(
        people_url(draft), {"username": "sam", "role": "reviewer"}, headers=HTMX
    )
    assert response.status_code == 200
    fragment = response.content.decode().strip()
    assert fragment.startswith('<section id="people"')
    assert 'data-username="sam"' in fragment
    assert roles.role_of(stranger, draft.decision_type) == roles.Role.REVIEWER
    response = as_owner.post(people_url(draft, "decision_type_access_revoke"), {"username": "sam"})
    assert response.status_code == 302
    assert roles.role_of(stranger, draft.decision_type) is None


def test_unknown_people_and_the_last_owner_are_inline_errors(as_owner, draft):
    response = as_owner.post(
        people_url(draft), {"username": "nobody", "role": "viewer"}, headers=HTMX
    )
    assert response.status_code == 422
    assert people.NO_SUCH_PERSON in response.content.decode()
    response = as_owner.post(
        people_url(draft, "decision_type_access_revoke"), {"username": "olivia"}, headers=HTMX
    )
    assert response.status_code == 422
    assert services.LAST_OWNER in response.content.decode()


def test_viewers_see_who_has_access_but_cannot_change_it(as_viewer, draft):
    page = as_viewer.get(version_url(draft)).content.decode()
    people = page[page.index('<section id="people"') :]
    assert 'data-username="olivia"' in people and 'id="grant"' not in people
    response = as_viewer.post(people_url(draft), {"username": "vera", "role": "owner"})
    assert response.status_code == 403
