"""Fixtures shared by the contracts, workbench and browser suites, and the browser-test gate.

People are named for their role on the Atlas credit-review type: `owner` owns it, `reviewer`
and `viewer` were granted those roles by the owner, `other_owner` is a policy owner who owns
only the refund-desk type, `catalogue_manager` manages the shared source-class catalogue,
`stranger` is signed in with no group and no grant.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_MISSING = (
    f"Debian's Chromium is not installed at {CHROMIUM} (apt-get install chromium); "
    "the browser tests cannot run on this machine and are skipped"
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if CHROMIUM.exists():
        return
    skip = pytest.mark.skip(reason=CHROMIUM_MISSING)
    browser_items = [item for item in items if "browser" in item.keywords]
    for item in browser_items:
        item.add_marker(skip)
    if browser_items:
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(f"NOTE: {len(browser_items)} tests skipped: {CHROMIUM_MISSING}.")


# --------------------------------------------------------------------------- people


@pytest.fixture(autouse=True)
def _demo_keys_outside_the_checkout(settings, tmp_path_factory):
    """The demo's key files (load_demo) go to the test session's temporary folder, not to
    the checkout's var/demo-keys."""
    settings.DEMO_KEYS_DIR = str(tmp_path_factory.getbasetemp() / "demo-keys")


@pytest.fixture
def make_user(db):
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    def make(username: str, *groups: str, superuser: bool = False):
        model = get_user_model()
        user = model.objects.create_user(
            username=username, password=f"{username}-password", is_superuser=superuser
        )
        for group in groups:
            user.groups.add(Group.objects.get(name=group))
        # A fresh instance, so no permission cache predates the groups.
        return model.objects.get(pk=user.pk)

    return make


@pytest.fixture
def owner(make_user):
    from contracts import roles

    return make_user("olivia", roles.POLICY_OWNERS)


@pytest.fixture
def as_owner(client, owner):
    """The test client, signed in as the Atlas type's owner."""
    client.force_login(owner)
    return client


@pytest.fixture
def other_owner(make_user):
    from contracts import roles

    return make_user("otto", roles.POLICY_OWNERS)


@pytest.fixture
def reviewer(make_user):
    from contracts import roles

    return make_user("rafael", roles.RISK_REVIEWERS)


@pytest.fixture
def viewer(make_user):
    from contracts import roles

    return make_user("vera", roles.VIEWERS)


@pytest.fixture
def catalogue_manager(make_user):
    from contracts import roles

    return make_user("cleo", roles.CATALOGUE_MANAGERS)


@pytest.fixture
def stranger(make_user):
    return make_user("sam")


@pytest.fixture
def superuser(make_user):
    return make_user("root", superuser=True)


# --------------------------------------------------------------------------- contracts


@pytest.fixture
def catalogue(owner, catalogue_manager):
    """The demo's source classes, created through the service by the catalogue manager."""
    from contracts import demo
    from contracts.models import SourceClass

    demo.create_source_classes(actor=catalogue_manager)
    return {c.key: c for c in SourceClass.objects.all()}


@pytest.fixture
def atlas(catalogue, owner, reviewer, viewer):
    """The Atlas credit-review type: owned by `owner`, shared with `reviewer` and `viewer`."""
    from contracts import demo

    return demo.create_contract(demo.ATLAS, owner=owner, reviewers=[reviewer], viewers=[viewer])


@pytest.fixture
def refund(catalogue, other_owner):
    """The refund-desk type, owned by `other_owner` and shared with nobody."""
    from contracts import demo

    return demo.create_contract(demo.REFUND_DESK, owner=other_owner)


@pytest.fixture
def draft(atlas):
    from contracts import selectors

    return selectors.current_version(decision_type=atlas)


@pytest.fixture
def demo_workspace(db):
    from contracts import demo

    demo.load(io.StringIO())
