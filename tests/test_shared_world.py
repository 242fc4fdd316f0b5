"""The shared test world (tests/shared_world.py): a test holds the rows of exactly the parts
its fixtures ask for, the same whether they were copied from the session's record or built,
and after a flush the fixtures build their parts again."""

from __future__ import annotations

import pytest

ATLAS_PARTS = ("owner", "reviewer", "viewer", "catalogue_manager", "catalogue", "atlas")


def _atlas_as_seen():
    """What the tests see of the Atlas world, without ids or times."""
    from django.contrib.auth import get_user_model
    from guardian.shortcuts import get_perms

    from contracts.models import AuditEvent, DecisionType, SourceClass

    atlas = DecisionType.objects.get()
    return {
        "people": {
            user.username: (
                sorted(user.groups.values_list("name", flat=True)),
                get_perms(user, atlas),
            )
            for user in get_user_model().objects.all()
        },
        "classes": sorted(SourceClass.objects.values_list("key", "label", "authority_tier")),
        "propositions": sorted(
            atlas.versions.get().propositions.values_list("key", "accepted_classes", "required")
        ),
        "events": sorted(AuditEvent.objects.values_list("actor__username", "action")),
    }


def _in_a_rolled_back_transaction(make):
    from django.db import transaction

    with transaction.atomic():
        seen = make()
        transaction.set_rollback(True)
    return seen


def test_a_test_holds_only_the_parts_it_asks_for(owner, viewer):
    from django.contrib.auth import get_user_model

    from contracts.models import DecisionType, SourceClass

    usernames = get_user_model().objects.values_list("username", flat=True)
    assert sorted(usernames) == ["olivia", "vera"]
    assert not DecisionType.objects.exists() and not SourceClass.objects.exists()


def test_copied_parts_are_what_building_them_leaves(db):
    from shared_world import ID_RANGE, RECIPES, World

    from contracts.models import DecisionType

    world = World()
    world.record(["atlas"])

    def copied():
        for part in ATLAS_PARTS:
            world.insert(part)
        assert DecisionType.objects.get().pk > ID_RANGE  # taken from the record
        return _atlas_as_seen()

    def built():
        for part in ATLAS_PARTS:
            RECIPES[part].build()
        return _atlas_as_seen()

    assert _in_a_rolled_back_transaction(copied) == _in_a_rolled_back_transaction(built)


def test_after_a_flush_the_fixtures_build_their_parts(db, monkeypatch):
    from django.core.management.sql import emit_post_migrate_signal
    from django.utils import timezone
    from shared_world import WORLD

    monkeypatch.setattr(WORLD, "_parts", WORLD._parts)  # the other tests keep the record
    emit_post_migrate_signal(verbosity=0, interactive=False, db="default")  # as a flush does
    before = timezone.now()
    assert WORLD.person("owner").date_joined >= before


@pytest.mark.django_db(transaction=True)
def test_a_transactional_test_gets_its_parts_built(atlas, reviewer):
    from guardian.shortcuts import get_perms

    from contracts import roles

    assert roles.REVIEW in get_perms(reviewer, atlas)


def test_a_part_asked_for_after_the_tests_own_rows_is_built(make_user):
    """What a part builds may depend on rows the test wrote first, so it is built, not copied."""
    from shared_world import World

    from contracts.models import DecisionType

    world = World()
    world.record(["atlas"])
    recorded = world._parts["atlas"].added[DecisionType][0]["id"]
    for part in ("owner", "reviewer", "viewer", "catalogue_manager"):
        world.insert(part)
    make_user("zed")
    world.insert("catalogue")
    world.insert("atlas")
    assert DecisionType.objects.get().pk != recorded  # an id of its own: built in the test


def test_a_client_signed_in_first_still_gets_the_recorded_rows(db, client):
    """A session row is no row a part builds on: signing in before asking for the rest of
    the world (as most view tests do) leaves the parts copied, with the record's ids."""
    from shared_world import World

    from contracts.models import DecisionType

    world = World()
    world.record(["atlas"])
    recorded = world._parts["atlas"].added[DecisionType][0]["id"]
    client.force_login(world.person("owner"))
    for part in ("reviewer", "viewer", "catalogue_manager", "catalogue", "atlas"):
        world.insert(part)
    assert DecisionType.objects.get().pk == recorded
