"""pytest-django's settings: the same app, a fast password hasher and no debug toolbar noise."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .base import *  # noqa: F403

SECRET_KEY = "test-only-not-secret"
DEBUG = False
ALLOWED_HOSTS = ["*"]

# Hashing is not under test; the default PBKDF2 would dominate the suite's run time.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
AUTH_PASSWORD_VALIDATORS = []

STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.InMemoryStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

# Tasks run in-process as they are enqueued; one scenarios test checks the database queue.
TASKS = {"default": {"BACKEND": "django.tasks.backends.immediate.ImmediateBackend"}}

# The live server behind the browser tests answers htmx's parallel requests from several
# threads. An in-memory SQLite database would be one connection shared by all of them, which
# SQLite does not allow, so SQLite tests use a file per test process (xdist adds a suffix).
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":  # noqa: F405
    DATABASES["default"]["TEST"] = {  # noqa: F405
        "NAME": str(Path(tempfile.gettempdir()) / f"workbench-test-{os.getpid()}.sqlite3")
    }
    DATABASES["default"]["OPTIONS"] = {  # noqa: F405
        "init_command": "PRAGMA synchronous=OFF; PRAGMA journal_mode=WAL;",
        "transaction_mode": "IMMEDIATE",
    }
