"""The Django apps import in one direction inside themselves too: no module of an app imports,
even from inside a function or under `if TYPE_CHECKING:`, a module that imports it back.
`lint-imports` keeps the apps layered against each other; this keeps each app free of
circles, module by module (the same check as the compiler's packages get)."""

from __future__ import annotations

import sys
from pathlib import Path

import grimp
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "compiler"))
from test_import_graph import circles  # noqa: E402

APPS = ("workbench", "publishing", "scenarios", "contracts", "workers")


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph(*APPS, cache_dir=None)


@pytest.mark.parametrize("app", APPS)
def test_no_module_of_an_app_imports_itself_back(graph, app):
    assert circles(graph, app) == []
