"""Review fixtures: signing keys for the owner and the reviewer, the demo scenarios of the
Atlas type, and versions in each state of the review flow."""

from __future__ import annotations

import pytest


@pytest.fixture
def devices(tmp_path):
    """People's own key files (as `evidence-compiler keygen` writes them): approving and
    publishing sign with them, on "their" side, never with a key the workbench holds."""
    from publishing.demo import KeyFiles

    return KeyFiles(tmp_path / "keys")


@pytest.fixture
def key_from_before(devices):
    """key_from_before(person) -> a key registered while `person` still signed (a risk
    reviewer then), kept after they lost that role: only a signer registers a key, but a
    demotion does not take one's keys away (what they signed must still verify)."""
    from django.contrib.auth.models import Group

    from contracts import roles

    def register(person):
        group = Group.objects.get(name=roles.RISK_REVIEWERS)
        person.groups.add(group)
        key = devices.ensure(type(person).objects.get(pk=person.pk))
        person.groups.remove(group)
        return key

    return register


@pytest.fixture
def keys(owner, reviewer, devices):
    return {"owner": devices.ensure(owner), "reviewer": devices.ensure(reviewer)}


@pytest.fixture
def suite(atlas, owner):
    """The demo's corpora and scenarios (the refund desk too: the demo loads both types)."""
    from shared_world import WORLD

    WORLD.insert("suite")
    return atlas


@pytest.fixture
def submitted(suite, draft, owner, keys):
    from publishing import review

    draft.refresh_from_db()
    return review.version_submit(
        actor=owner, version=draft, expected_lock_version=draft.lock_version
    )


@pytest.fixture
def approved(submitted, reviewer, devices):
    from publishing import review

    report = review.report_for(submitted)
    devices.approve(actor=reviewer, version=submitted, report_sha256=report.sha256)
    submitted.refresh_from_db()
    return submitted


@pytest.fixture
def published(approved, owner, devices):

    return devices.publish(actor=owner, version=approved)
