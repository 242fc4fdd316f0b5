"""pytest-django's settings: the same app, a fast password hasher and no debug toolbar noise."""

from __future__ import annotations

from .base import *  # noqa: F403

SECRET_KEY = "test-only-not-secret"
DEBUG = False
ALLOWED_HOSTS = ["*"]

# Hashing is not under test; the default PBKDF2 would dominate the suite's run time.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
AUTH_PASSWORD_VALIDATORS: list[dict[str, str]] = []

STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.InMemoryStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

# Tasks run in-process as they are enqueued; one scenarios test checks the database queue.
TASKS = {"default": {"BACKEND": "django.tasks.backends.immediate.ImmediateBackend"}}
