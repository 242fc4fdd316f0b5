"""A management command the Signing keys page prints runs as printed, from a checkout:
manage.py defaults to the production profile, so the page names the development one."""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.urls import reverse
from sqlite_files import copy_database

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.django_db


def _run(command: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    # `make run` makes the checkout's .venv; a worktree without one runs this interpreter.
    if not (ROOT / ".venv/bin/python").exists():
        command = command.replace(".venv/bin/python", sys.executable)
    return subprocess.run(
        ["bash", "-c", command], cwd=ROOT, env=env, capture_output=True, text=True, timeout=240
    )


def test_the_export_public_keys_command_on_the_signing_keys_page_runs_as_printed(
    client, owner, tmp_path, migrated_sqlite
):
    client.force_login(owner)
    page = client.get(reverse("signing_keys")).content.decode()
    (printed,) = re.findall(r"<code data-command>([^<]*)</code>", page)
    printed = html.unescape(printed)
    assert printed.startswith("DJANGO_SETTINGS_MODULE=workbench.settings.dev ")
    assert printed.endswith("manage.py export_public_keys DIR")
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'checkout.sqlite3'}"  # the checkout's own DB
    # The state `make run` leaves a checkout in: migrated (a copy of a file migrated once per
    # test run), the demo (and its keys) loaded.
    copy_database(migrated_sqlite, tmp_path / "checkout.sqlite3")
    env["WORKBENCH_DEMO_KEYS_DIR"] = str(tmp_path / "demo-keys")
    done = _run(printed.removesuffix("export_public_keys DIR") + "load_demo", env)
    assert done.returncode == 0, done.stderr
    ran = _run(printed.replace("DIR", str(tmp_path / "keys")), env)
    assert ran.returncode == 0, ran.stderr
    assert (tmp_path / "keys" / "keys.json").is_file()
    # What the page printed before: manage.py alone is the production profile, which stops.
    bare = subprocess.run(
        [sys.executable, "manage.py", "export_public_keys", str(tmp_path / "bare")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert bare.returncode != 0 and "DJANGO_SECRET_KEY" in bare.stderr
