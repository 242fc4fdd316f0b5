"""Fixtures for tests/deployment (helpers in deployment_support)."""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

import pytest
from deployment_support import (
    BIN,
    FAULT_SETTINGS,
    FAULT_URLS,
    ROOT,
    Server,
    free_port,
    production_env,
    run,
    wait_until_serving,
)


@pytest.fixture(scope="session")
def deployment_database(tmp_path_factory) -> Iterator[str]:
    """A database for the production processes: never the test database pytest-django made."""
    base = os.environ.get("DATABASE_URL", "")
    if not base.startswith("postgres"):
        yield f"sqlite:///{tmp_path_factory.mktemp('deploy') / 'workbench.sqlite3'}"
        return
    import psycopg

    name = f"wb_deploy_{uuid.uuid4().hex[:10]}"
    parts = urlsplit(base)
    admin_url = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin_url, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    yield urlunsplit(parts._replace(path=f"/{name}"))
    with psycopg.connect(admin_url, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def production_server(tmp_path_factory, deployment_database) -> Iterator[Server]:
    """Migrated, static files collected, the demo loaded; gunicorn plus a task worker."""
    here = tmp_path_factory.mktemp("production")
    (here / "fault_settings.py").write_text(FAULT_SETTINGS)
    (here / "fault_urls.py").write_text(FAULT_URLS)
    env = production_env(deployment_database, here / "static")
    env["PYTHONPATH"] = os.pathsep.join([str(here), str(ROOT)])
    django_admin = str(BIN / "django-admin")
    for command in (["migrate", "--noinput"], ["collectstatic", "--noinput"], ["load_demo"]):
        run([django_admin, *command], env)
    port = free_port()
    log = here / "server.log"
    with log.open("w") as out:
        server_env = {**env, "DJANGO_SETTINGS_MODULE": "fault_settings"}
        web = subprocess.Popen(
            [
                str(BIN / "gunicorn"),
                "workbench.wsgi",
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                "2",
                "--threads",
                "4",
            ],
            env=server_env,
            cwd=here,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        worker = subprocess.Popen(
            [django_admin, "db_worker", "--no-reload", "--interval", "0.5"],
            env=env,
            cwd=here,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            url = f"http://127.0.0.1:{port}"
            wait_until_serving(url, web, log)
            yield Server(url, log, env)
        finally:
            for process in (web, worker):
                process.terminate()
            for process in (web, worker):
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    process.kill()
