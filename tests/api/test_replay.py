"""Recorded decisions replayed against a draft: the window of days, what changes, the button
on the impact report, and a draft edited after its replay."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.api.conftest import ATLAS


@pytest.fixture
def recorded(demo, token_for, atlas_receipt):
    """One Atlas receipt recorded through the API's ingestion."""
    from publishing import receipts, tokens

    token = tokens.authenticate(token_for(ATLAS))
    (outcome,) = receipts.receipts_ingest(token=token, receipts=[atlas_receipt("d-1")])
    assert outcome.status == receipts.ACCEPTED
    return demo[ATLAS]


def version(atlas, number):
    return atlas.versions.get(number=number)


def test_replaying_against_the_published_contract_changes_nothing(recorded):
    from django.utils import timezone

    from publishing.replaying import replay_receipts

    report = replay_receipts(version(recorded, 1), days=30, now=timezone.now())
    assert (report["replayed"], report["unchanged"], report["changed"]) == (1, 1, [])


def test_replaying_against_the_draft_names_the_decision_and_its_flip(recorded):
    from django.utils import timezone

    from publishing.replaying import replay_receipts

    report = replay_receipts(version(recorded, 2), days=30, now=timezone.now())
    (decision,) = report["changed"]
    assert decision["decision_id"] == "d-1"
    (flip,) = [f for f in decision["flips"] if f["proposition"] == "waiver_valid"]
    assert (flip["before"], flip["after"]) == ("unknown", "supported")


def test_receipts_older_than_the_window_are_not_replayed(recorded):
    from django.utils import timezone

    from publishing.models import DecisionReceipt
    from publishing.replaying import replay_receipts

    DecisionReceipt.objects.update(received_at=timezone.now() - dt.timedelta(days=31))
    assert replay_receipts(version(recorded, 2), days=30, now=timezone.now())["replayed"] == 0


def test_the_button_replays_and_the_report_says_when_the_draft_moved_on(recorded, client, olivia):
    from contracts import services

    client.force_login(olivia)
    url = f"/types/{ATLAS}/v2/recorded-decisions/replay/"
    assert client.post(url).status_code == 302
    page = client.get(f"/types/{ATLAS}/v2/impact/").content.decode()
    assert 'data-decision="d-1"' in page and "changed after this replay" not in page
    draft = version(recorded, 2)
    services.version_update_settings(
        actor=olivia, version=draft, expected_lock_version=draft.lock_version,
        purposes=list(draft.purposes), policy_name=draft.policy_name,
        policy_version=draft.policy_version + 1, min_relevance=draft.min_relevance,
        role_order=list(draft.role_order),
    )  # fmt: skip
    assert "changed after this replay" in client.get(f"/types/{ATLAS}/v2/impact/").content.decode()


def test_a_viewer_without_access_cannot_start_a_replay(recorded, client, make_user):
    from publishing.models import ReceiptReplay

    client.force_login(make_user("nobody"))
    assert client.post(f"/types/{ATLAS}/v2/recorded-decisions/replay/").status_code == 404
    assert not ReceiptReplay.objects.exists()
