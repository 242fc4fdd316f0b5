"""Fixtures shared by the contracts, workbench and browser suites, and the browser-test gate.

People are named for their role on the Atlas credit-review type: `owner` owns it, `reviewer`
and `viewer` were granted those roles by the owner, `other_owner` is a policy owner who owns
only the refund-desk type, `catalogue_manager` manages the shared source-class catalogue,
`stranger` is signed in with no group and no grant.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

# The `identity_provider` fixture: a real OpenID provider in its own process (single sign-on).
pytest_plugins = ["identity_provider.harness"]

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_MISSING = (
    f"Debian's Chromium is not installed at {CHROMIUM} (apt-get install chromium); "
    "the browser tests cannot run on this machine and are skipped"
)


@pytest.hookimpl(trylast=True)  # after pytest-django's order: database tests, then the rest
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Long tests without a database first: at the end they leave the other workers idle.
    items.sort(key=lambda item: "long_process" not in item.keywords)
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


def _demo_keys_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.getbasetemp() / "demo-keys")


if importlib.util.find_spec("pytest_django") is not None:
    # Not where tests/compiler runs on its own, with the evidence-compiler wheel and no Django
    # (test_distribution.py); the other fixtures here are only set up when a test asks.

    @pytest.fixture(autouse=True)
    def _demo_keys_outside_the_checkout(settings, tmp_path_factory):
        """The demo's key files (load_demo) go to the test session's temporary folder, not
        to the checkout's var/demo-keys."""
        settings.DEMO_KEYS_DIR = _demo_keys_dir(tmp_path_factory)

    @pytest.fixture(autouse=True)
    def _a_new_test_for_the_world():
        """The shared world counts the rows it writes in each test (shared_world.World)."""
        from shared_world import WORLD

        WORLD.begin_test()


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker, request, tmp_path_factory):
    """pytest-django's test database, plus the rows of the shared world's parts (people,
    catalogue, types, demo) that the collected tests ask for, recorded once (shared_world)."""
    from django.test import override_settings
    from shared_world import WORLD

    wanted = {name for item in request.session.items for name in getattr(item, "fixturenames", ())}
    with (
        django_db_blocker.unblock(),
        override_settings(DEMO_KEYS_DIR=_demo_keys_dir(tmp_path_factory)),
    ):
        WORLD.folder = tmp_path_factory.mktemp("world")
        WORLD.record(wanted)


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


# The fixtures below take their rows from the world built once per test process
# (shared_world); each returns a fresh instance, so no permission cache outlives a test.


@pytest.fixture
def owner(db):
    from shared_world import WORLD

    return WORLD.person("owner")


@pytest.fixture
def as_owner(client, owner):
    """The test client, signed in as the Atlas type's owner."""
    client.force_login(owner)
    return client


@pytest.fixture
def other_owner(db):
    from shared_world import WORLD

    return WORLD.person("other_owner")


@pytest.fixture
def reviewer(db):
    from shared_world import WORLD

    return WORLD.person("reviewer")


@pytest.fixture
def viewer(db):
    from shared_world import WORLD

    return WORLD.person("viewer")


@pytest.fixture
def catalogue_manager(db):
    from shared_world import WORLD

    return WORLD.person("catalogue_manager")


@pytest.fixture
def stranger(db):
    from shared_world import WORLD

    return WORLD.person("stranger")


@pytest.fixture
def superuser(db):
    from shared_world import WORLD

    return WORLD.person("superuser")


# --------------------------------------------------------------------------- contracts


@pytest.fixture
def catalogue(owner, catalogue_manager):
    """The demo's source classes, created through the service by the catalogue manager."""
    from shared_world import WORLD

    from contracts.models import SourceClass

    WORLD.insert("catalogue")
    return {c.key: c for c in SourceClass.objects.all()}


@pytest.fixture
def atlas(catalogue, owner, reviewer, viewer):
    """The Atlas credit-review type: owned by `owner`, shared with `reviewer` and `viewer`."""
    from shared_world import WORLD

    from contracts import demo
    from contracts.models import DecisionType

    WORLD.insert("atlas")
    return DecisionType.objects.get(key=demo.ATLAS.key)


@pytest.fixture
def refund(catalogue, other_owner):
    """The refund-desk type, owned by `other_owner` and shared with nobody."""
    from shared_world import WORLD

    from contracts import demo
    from contracts.models import DecisionType

    WORLD.insert("refund")
    return DecisionType.objects.get(key=demo.REFUND_DESK.key)


@pytest.fixture
def draft(atlas):
    from contracts import selectors

    return selectors.current_version(decision_type=atlas)


@pytest.fixture
def demo_workspace(db):
    """contracts.demo.load: the demo people, the catalogue and both types, nothing published."""
    from shared_world import WORLD

    WORLD.insert("demo_workspace")


@pytest.fixture
def demo_versions(demo_workspace):
    """The demo's scenarios and review: Atlas version 1 published, version 2 in review."""
    from shared_world import WORLD

    WORLD.insert("demo_versions")


# --------------------------------------------------------------------------- processes of their own


@pytest.fixture(scope="session")
def migrated_sqlite(tmp_path_factory) -> Path:
    """A SQLite file of the development settings, migrated once per test run, for tests that
    run manage.py in a process of their own: copy it (sqlite_files.copy_database)."""
    from sqlite_files import built_once, manage

    return built_once(
        tmp_path_factory, "migrated", lambda path: manage(path, "migrate", "--noinput")
    )
