"""SQLite files of the development settings for tests that run `manage.py` in a process of
their own (a worker, a command as a page prints it): built once per test run and copied by
each test, since migrating and loading cost more than most of what such a test then does.

Under xdist the test processes share the parent of their temporary folders; the first one to
ask for a file builds it there while the others wait on a lock.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest

MANAGE = [sys.executable, str(Path(__file__).resolve().parents[1] / "manage.py")]


def dev_environment(database: Path, **settings: str) -> dict[str, str]:
    """This process's environment with the development settings on the SQLite file `database`."""
    return os.environ | {
        "DJANGO_SETTINGS_MODULE": "workbench.settings.dev",
        "DATABASE_URL": f"sqlite:///{database}",
        "DJANGO_DEBUG": "1",
        **settings,
    }


def manage(database: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    """`manage.py ARGUMENTS` on `database` (development settings), which must succeed."""
    return subprocess.run(
        [*MANAGE, *arguments],
        env=dev_environment(database),
        check=True,
        capture_output=True,
        text=True,
    )


def copy_database(source: Path, target: Path) -> None:
    # SQLite's backup copies what the source's write-ahead log holds too.
    with closing(sqlite3.connect(source)) as reading, closing(sqlite3.connect(target)) as writing:
        reading.backup(writing)


def built_once(
    tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], object]
) -> Path:
    """The SQLite file `name`, which `build(path)` makes at `path` once per test run: copy
    it (`copy_database`) rather than write to it."""
    folder = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        folder = folder.parent
    database = folder / f"{name}.sqlite3"
    with open(folder / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not database.exists():
            building = folder / f"{name}-building"
            shutil.rmtree(building, ignore_errors=True)
            building.mkdir()
            build(building / "workbench.sqlite3")
            copy_database(building / "workbench.sqlite3", building / "built.sqlite3")
            # Renamed whole, so a file under this name is always a finished one.
            (building / "built.sqlite3").rename(database)
            shutil.rmtree(building)
    return database
