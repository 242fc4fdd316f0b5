"""A replay cut into slices, one task each: the merged report is the replay done at once,
progress is shown while it runs, and a slice whose worker stopped is queued again."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.api.conftest import ATLAS


@pytest.fixture
def three(demo, token_for, atlas_receipt):
    from publishing import receipts, tokens

    token = tokens.authenticate(token_for(ATLAS))
    receipts.receipts_ingest(token=token, receipts=[atlas_receipt(f"d-{n}") for n in range(3)])
    return demo[ATLAS].versions.get(number=2)


def test_slices_merge_into_the_report_of_the_replay_done_at_once(three, settings):
    from django.utils import timezone

    from publishing import replay
    from publishing.replaying import replay_receipts

    settings.RECEIPT_REPLAY_CHUNK = 1
    row = replay.replay_start(actor=None, version=three)
    assert row.chunks.count() == 3
    assert (row.status, row.total, row.done) == ("done", 3, 3)
    at_once = replay_receipts(three, days=30, now=timezone.now())
    assert row.result == at_once
    assert [c["decision_id"] for c in row.result["changed"]] == ["d-0", "d-1", "d-2"]


def test_the_report_shows_progress_while_slices_run(three, settings, client, olivia):
    from django.utils import timezone

    from publishing.models import ReceiptReplay, ReceiptReplayChunk
    from publishing.replaying import replay_plan

    settings.RECEIPT_REPLAY_CHUNK = 2
    row = ReceiptReplay.objects.create(version=three, days=30)
    replay_plan(row, now=timezone.now())
    first = row.chunks.order_by("number").first()
    ReceiptReplayChunk.objects.filter(pk=first.pk).update(status="done", result={})
    ReceiptReplay.objects.filter(pk=row.pk).update(status="running", done=2)
    client.force_login(olivia)
    page = client.get(f"/types/{ATLAS}/v2/impact/").content.decode()
    assert "2 of 3 receipt(s) replayed" in page
    assert '<progress max="3" value="2"' in page


def test_a_slice_whose_worker_stopped_is_queued_again_and_finishes(three, settings):
    from django.utils import timezone

    from publishing import replay
    from publishing.models import ReceiptReplay, ReceiptReplayChunk
    from publishing.replaying import replay_plan
    from workers import registry

    settings.RECEIPT_REPLAY_CHUNK = 3
    row = ReceiptReplay.objects.create(version=three, days=30)
    (chunk,) = replay_plan(row, now=timezone.now())
    long_ago = timezone.now() - dt.timedelta(seconds=replay.stale_seconds() + 1)
    ReceiptReplayChunk.objects.filter(pk=chunk.pk).update(status="running", claimed_at=long_ago)
    ReceiptReplay.objects.filter(pk=row.pk).update(status="running")
    # A slice claimed a moment ago is left to its worker.
    fresh = ReceiptReplayChunk.objects.create(
        replay=row, number=9, receipt_ids=[], status="running", claimed_at=timezone.now()
    )
    recovered = registry.recover_stale_work()  # what each worker runs as it starts
    assert any(f"Slice 0 of receipt replay {row.pk}" in line for line in recovered)
    chunk.refresh_from_db()
    fresh.refresh_from_db()
    assert chunk.status == "done" and fresh.status == "running"  # the immediate backend ran it
    assert ReceiptReplay.objects.get(pk=row.pk).done == 3


def test_a_replay_with_no_receipts_is_done_at_once(demo):
    from publishing import replay

    row = replay.replay_start(actor=None, version=demo[ATLAS].versions.get(number=2))
    assert (row.status, row.total, row.result["replayed"]) == ("done", 0, 0)


def test_a_slice_queued_again_while_its_first_worker_was_slow_counts_once(three, settings):
    from django.utils import timezone

    from publishing import replay
    from publishing.models import ReceiptReplay, ReceiptReplayChunk
    from publishing.replaying import chunk_finish, replay_plan

    settings.RECEIPT_REPLAY_CHUNK = 3
    row = ReceiptReplay.objects.create(version=three, days=30)
    (chunk,) = replay_plan(row, now=timezone.now())
    long_ago = timezone.now() - dt.timedelta(seconds=replay.stale_seconds() + 1)
    ReceiptReplayChunk.objects.filter(pk=chunk.pk).update(status="running", claimed_at=long_ago,
                                                          claims=1)  # fmt: skip
    ReceiptReplay.objects.filter(pk=row.pk).update(status="running")
    replay.chunks_recover_stale()  # a second worker takes it (at once, here) and counts it
    row.refresh_from_db()
    assert (row.status, row.done) == ("done", 3)
    # The first worker, slow rather than stopped, finishes under its older claim.
    chunk_finish(chunk_id=chunk.pk, claim=1, part={"replayed": 99})
    row.refresh_from_db()
    assert (row.done, row.result["replayed"]) == (3, 3)
