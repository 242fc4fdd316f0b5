"""The catalogue pages: a catalogue manager previews a change's impact and confirms it, a
policy owner proposes, refusals are 403 with a reason, and everything works without
JavaScript (plain form posts)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from contracts import services
from contracts.models import AuditEvent, SourceClass, SourceClassProposal
from workbench.views import catalogue as views

pytestmark = pytest.mark.django_db


def posted(key, **changes):
    """The edit form's values for a class as it is now, with some changed (a checkbox is
    posted as "on" when ticked and left out when not)."""
    source_class = SourceClass.objects.get(key=key)
    values = source_class.field_values() | {"lock_version": source_class.lock_version} | changes
    return {k: ("on" if v is True else v) for k, v in values.items() if v is not False}


@pytest.fixture
def as_manager(client, catalogue_manager):
    client.force_login(catalogue_manager)
    return client


@pytest.fixture
def proposal(catalogue, owner):
    """olivia's open proposal: case notes are no longer weak."""
    note = catalogue["case_note"]
    return services.source_class_propose(
        actor=owner, source_class=note, **(note.field_values() | {"weak": False})
    )


def edit_url(key):
    return reverse("source_class_edit", kwargs={"key": key})


def accept_investigation_notes(owner, draft):
    services.accepted_class_add(
        actor=owner,
        proposition=draft.propositions.get(key="waiver_valid"),
        expected_lock_version=draft.lock_version,
        class_key="investigation_note",
    )


def test_a_change_shows_its_impact_and_saves_only_once_confirmed(client, superuser, owner, draft):
    accept_investigation_notes(owner, draft)
    client.force_login(superuser)
    data = posted("investigation_note", weak=True)
    preview = client.post(edit_url("investigation_note"), data)
    page = preview.content.decode()
    assert preview.status_code == 200
    assert "What this change does" in page
    assert 'data-affected="credit.review.continuation"' in page
    assert "Credit review: continue the facility" in page and "(draft v1)" in page
    assert 'data-added="weak_class_accepted"' in page
    assert 'name="confirm"' in page
    assert SourceClass.objects.get(key="investigation_note").weak is False
    assert not AuditEvent.objects.filter(action="source_class.updated").exists()

    response = client.post(edit_url("investigation_note"), {**data, "confirm": "1"})
    assert response.status_code == 302
    assert SourceClass.objects.get(key="investigation_note").weak is True
    event = AuditEvent.objects.get(action="source_class.updated")
    assert (event.changes["before"], event.changes["after"]) == ({"weak": False}, {"weak": True})


def test_the_confirm_step_carries_the_values_without_javascript(as_manager, catalogue):
    data = posted("investigation_note", weak=True)
    page = as_manager.post(edit_url("investigation_note"), data).content.decode()
    # The previewed values travel as hidden inputs, so the confirm button posts them.
    assert 'type="hidden" name="label" value="Investigation note"' in page
    assert 'type="hidden" name="weak" value="True"' in page
    revise = as_manager.post(edit_url("investigation_note"), {**data, "revise": "1"})
    assert revise.status_code == 200 and 'type="checkbox" name="weak"' in revise.content.decode()


def test_the_impact_counts_types_the_manager_cannot_see(as_manager, owner, draft):
    accept_investigation_notes(owner, draft)
    page = as_manager.post(
        edit_url("investigation_note"), posted("investigation_note", retired=True)
    ).content.decode()
    assert 'data-hidden="1"' in page and "Credit review" not in page


def test_a_change_that_changes_nothing_is_refused_inline(as_manager, catalogue):
    response = as_manager.post(edit_url("investigation_note"), posted("investigation_note"))
    assert response.status_code == 422
    assert services.NO_CATALOGUE_CHANGE.replace("'", "&#x27;") in response.content.decode()


def test_create_previews_then_saves(as_manager, catalogue):
    data = {"key": "signed_approval", "label": "Signed approval", "authority_tier": 2}
    preview = as_manager.post(reverse("source_class_create"), data)
    assert preview.status_code == 200 and "no contract's lint changes" in preview.content.decode()
    assert not SourceClass.objects.filter(key="signed_approval").exists()
    response = as_manager.post(reverse("source_class_create"), {**data, "confirm": "1"})
    assert response.status_code == 302
    assert SourceClass.objects.get(key="signed_approval").label == "Signed approval"


def test_duplicate_source_class_key_is_an_inline_error(as_manager, catalogue):
    response = as_manager.post(
        reverse("source_class_create"), {"key": "email", "label": "x", "authority_tier": 4}
    )
    assert response.status_code == 422
    assert "already exists" in response.content.decode()


def test_a_stale_confirmation_is_a_conflict(as_manager, catalogue, catalogue_manager):
    data = {"label": "First", "authority_tier": 4, "lock_version": 0, "confirm": "1"}
    assert as_manager.post(edit_url("email"), data).status_code == 302
    response = as_manager.post(edit_url("email"), {**data, "label": "Second"})
    assert response.status_code == 409
    assert services.STALE_SOURCE_CLASS in response.content.decode()
    assert SourceClass.objects.get(key="email").label == "First"


@pytest.mark.parametrize("person", ["owner", "viewer", "reviewer"])
def test_everyone_else_is_refused_with_the_reason(person, request, client, catalogue):
    client.force_login(request.getfixturevalue(person))
    data = posted("investigation_note", weak=True, confirm="1")
    for response in (
        client.get(edit_url("investigation_note")),
        client.post(edit_url("investigation_note"), data),
        client.post(reverse("source_class_create"), {"key": "fax", "label": "Fax"}),
    ):
        assert response.status_code == 403
        assert "Only catalogue managers" in response.content.decode()
    assert SourceClass.objects.get(key="investigation_note").weak is False


def test_the_list_offers_each_person_what_they_may_do(client, catalogue, owner, viewer):
    client.force_login(owner)
    page = client.get(reverse("source_class_list")).content.decode()
    assert reverse("source_class_propose", kwargs={"key": "email"}) in page
    assert edit_url("email") not in page and "Open proposals" not in page
    client.force_login(viewer)
    page = client.get(reverse("source_class_list")).content.decode()
    assert "Propose a change" not in page and edit_url("email") not in page


# --------------------------------------------------------------------------- proposals


def test_an_owner_proposes_and_a_manager_accepts(client, catalogue, owner, catalogue_manager):
    client.force_login(owner)
    response = client.post(
        reverse("source_class_propose", kwargs={"key": "case_note"}),
        {**posted("case_note", weak=False), "reason": "Notes are reviewed now"},
    )
    proposal = SourceClassProposal.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("source_class_proposal", kwargs={"pk": proposal.pk})
    assert proposal.proposed_fields == ["weak"]
    assert SourceClass.objects.get(key="case_note").weak is True
    mine = client.get(reverse("source_class_list")).content.decode()
    assert "Your proposals" in mine and 'data-status="open"' in mine

    client.force_login(catalogue_manager)
    listing = client.get(reverse("source_class_list")).content.decode()
    assert "Open proposals" in listing and f'data-proposal="{proposal.pk}"' in listing
    detail = client.get(reverse("source_class_proposal", kwargs={"pk": proposal.pk}))
    assert "What this change does" in detail.content.decode()
    accept = reverse("source_class_proposal_accept", kwargs={"pk": proposal.pk})
    lock = SourceClass.objects.get(key="case_note").lock_version
    unconfirmed = client.post(accept, {"lock_version": lock})
    assert unconfirmed.status_code == 422
    assert views.CONFIRM_ON_THE_PAGE in unconfirmed.content.decode()
    assert client.post(accept, {"lock_version": lock, "confirm": "1"}).status_code == 302
    assert SourceClass.objects.get(key="case_note").weak is False
    proposal.refresh_from_db()
    assert (proposal.status, proposal.decided_by) == ("accepted", catalogue_manager)

    client.force_login(owner)
    mine = client.get(reverse("source_class_list")).content.decode()
    assert 'data-status="accepted"' in mine and "by cleo" in mine


def test_a_rejection_needs_a_reason_the_proposer_then_reads(
    client, proposal, owner, catalogue_manager
):
    client.force_login(catalogue_manager)
    reject = reverse("source_class_proposal_reject", kwargs={"pk": proposal.pk})
    response = client.post(reject, {"note": ""})
    assert response.status_code == 422
    assert services.REJECTION_NEEDS_NOTE in response.content.decode()
    assert client.post(reject, {"note": "Notes stay weak"}).status_code == 302
    client.force_login(owner)
    page = client.get(reverse("source_class_proposal", kwargs={"pk": proposal.pk}))
    assert "Notes stay weak" in page.content.decode()
    assert SourceClass.objects.get(key="case_note").weak is True


def test_an_owner_proposes_a_new_class(client, catalogue, owner):
    client.force_login(owner)
    response = client.post(
        reverse("source_class_propose_new"),
        {"key": "signed_approval", "label": "Signed approval", "authority_tier": 2},
    )
    assert response.status_code == 302
    assert SourceClassProposal.objects.get().key == "signed_approval"
    assert not SourceClass.objects.filter(key="signed_approval").exists()


def test_owners_cannot_decide_and_others_cannot_see_a_proposal(
    client, proposal, owner, other_owner, viewer
):
    client.force_login(owner)
    accept = reverse("source_class_proposal_accept", kwargs={"pk": proposal.pk})
    response = client.post(accept, {"confirm": "1", "lock_version": 0})
    assert response.status_code == 403 and "Only catalogue managers" in response.content.decode()
    for person in (other_owner, viewer):
        client.force_login(person)
        assert (
            client.get(reverse("source_class_proposal", kwargs={"pk": proposal.pk})).status_code
            == 404
        )
    client.force_login(viewer)
    response = client.get(reverse("source_class_propose", kwargs={"key": "case_note"}))
    assert response.status_code == 403 and services.PROPOSERS_ONLY in response.content.decode()
    proposal.refresh_from_db()
    assert proposal.status == "open"


def test_the_list_shows_the_catalogue_audit_trail(as_manager, catalogue):
    data = posted("investigation_note", weak=True, confirm="1")
    as_manager.post(edit_url("investigation_note"), data)
    page = as_manager.get(reverse("source_class_list")).content.decode()
    assert "Recent catalogue changes" in page
    assert "Updated source class &#x27;investigation_note&#x27;: weak" in page
    assert "weak: False → True" in page


def test_the_history_shows_a_proposal_only_to_whom_its_page_shows_it(
    client, owner, other_owner, viewer, catalogue_manager
):
    """A lab's calibration log: olivia proposes it is no longer weak, then proposes a new
    class that is rejected. Otto and vera see neither proposal in the history (their pages
    are 404 to them); olivia and the catalogue manager see both. A change the manager makes
    without a proposal stays public, like the catalogue."""
    log = services.source_class_create(
        actor=catalogue_manager, key="calibration_log", label="Calibration log", weak=True
    )
    services.source_class_propose(
        actor=owner,
        source_class=log,
        **(log.field_values() | {"weak": False, "label": "Kalibrierprotokoll"}),
    )
    rejected = services.source_class_propose(
        actor=owner, source_class=None, key="bench_whisper", label="Overheard at the bench"
    )
    services.source_class_proposal_reject(
        actor=catalogue_manager, proposal=rejected, note="Not a record."
    )
    secrets = ("Kalibrierprotokoll", "bench_whisper", "Overheard at the bench", "olivia")

    def history(person):
        client.force_login(person)
        page = client.get(reverse("source_class_list")).content.decode()
        return page[page.index('id="catalogue-history"') :]

    for outsider in (other_owner, viewer):
        seen = history(outsider)
        assert "Created source class &#x27;calibration_log&#x27;" in seen
        assert not [secret for secret in secrets if secret in seen]
        assert 'data-action="source_class.proposed"' not in seen
        assert 'data-action="source_class.proposal_rejected"' not in seen
    for insider in (owner, catalogue_manager):
        seen = history(insider)
        assert "Kalibrierprotokoll" in seen and "Overheard at the bench" in seen
        assert 'data-action="source_class.proposal_rejected"' in seen
