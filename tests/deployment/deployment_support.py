"""Helpers for tests/deployment: the production profile as a platform engineer runs it —
`django-admin` commands and gunicorn in their own processes with DEBUG off, on a database
of their own (a SQLite file, or a fresh PostgreSQL database beside DATABASE_URL's when that
is set, so `.ci/run` covers both).

The gunicorn server uses a settings module that is the production profile plus one URL that
raises, so the tests can see what a 500 writes to the log.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).parents[2]
BIN = Path(sys.executable).parent

FAULT_SETTINGS = """
from workbench.settings.production import *  # noqa: F403
ROOT_URLCONF = "fault_urls"
"""
FAULT_URLS = """
from django.contrib.auth.decorators import login_not_required
from django.urls import path
from workbench.urls import *  # noqa: F403
from workbench.urls import urlpatterns as site


@login_not_required
def fail(request):
    raise RuntimeError("a deliberate failure for the log test")


urlpatterns = [*site, path("fail/", fail)]
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def production_env(database_url: str, static_root: Path, **extra: str) -> dict[str, str]:
    """The variables a deployment sets, for plain HTTP on 127.0.0.1 behind a TLS proxy that
    says so in X-Forwarded-Proto (so no HTTPS redirect, cookies not Secure)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_"))}
    env.update(
        DJANGO_SETTINGS_MODULE="workbench.settings.production",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
        DJANGO_ALLOWED_HOSTS="127.0.0.1,localhost",
        DATABASE_URL=database_url,
        DJANGO_STATIC_ROOT=str(static_root),
        DJANGO_SECURE_PROXY_SSL_HEADER="X-Forwarded-Proto",
        DJANGO_SECURE_SSL_REDIRECT="false",
        DJANGO_SECURE_COOKIES="false",
        DJANGO_SECURE_HSTS_SECONDS="0",
        LOGIN_FAILURE_LIMIT="3",
    )
    env.update(extra)
    return env


def run(args: list[str], env: dict[str, str], cwd: Path = ROOT) -> subprocess.CompletedProcess:
    result = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"{args} failed:\n{result.stdout}\n{result.stderr}"
    return result


def wait_until_serving(url: str, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the server stopped:\n{log.read_text()}")
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"the server did not answer within a minute:\n{log.read_text()}")


class Server:
    def __init__(self, url: str, log: Path, env: dict[str, str]) -> None:
        self.url = url
        self.log = log
        self.env = env

    def log_lines(self) -> list[dict]:
        """The JSON lines written so far (gunicorn's own start-up lines are not JSON)."""
        lines = []
        for line in self.log.read_text().splitlines():
            if line.startswith("{"):
                lines.append(json.loads(line))
        return lines
