"""Django in a bench's own process, on a scratch database it may keep and reuse.

`list_pages.py` and `run_pages.py` measure pages in-process with Django's test client: the
development settings with DEBUG off, a database they build once (minutes at 10,000
scenarios) and reuse when the same `--database` file or `--database-url` is given again.
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def database_arguments(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--database", type=Path, help=f"SQLite file to keep {what} in, or reuse")
    parser.add_argument("--database-url", help=f"another database to keep {what} in, or reuse")


def django_on(args: argparse.Namespace, file_name: str) -> tuple[str, bool]:
    """Set Django up on the database the arguments name (a new SQLite file called `file_name`
    in a temporary folder when they name none) and migrate it. Returns its URL and whether a
    SQLite file was there already (a `--database-url` is asked by the caller what it holds)."""
    database = args.database or Path(tempfile.mkdtemp()) / file_name
    kept = database.exists()
    url = args.database_url or f"sqlite:///{database.resolve()}"
    sys.path[:0] = [str(ROOT), str(ROOT / "bench")]
    os.environ.update(
        DJANGO_SETTINGS_MODULE="workbench.settings.dev",
        DATABASE_URL=url,
        DJANGO_DEBUG="0",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
        DJANGO_ALLOWED_HOSTS="testserver",
    )
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    return url, kept
