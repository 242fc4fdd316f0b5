"""The built wheel is a deployable artefact: it holds every module, template and static file
of the checkout, and installed into a fresh virtual environment (no checkout on its path) it
migrates, passes `check --deploy` with no warning, and gunicorn serves pages and static files."""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.request
import venv
import zipfile
from pathlib import Path

import pytest
from deployment_support import ROOT, free_port, production_env, run, wait_until_serving

PACKAGED = ("compiler/", "contracts/", "scenarios/", "workbench/", "templates/", "static/")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), "."]
    run(build, dict(os.environ))
    (built,) = out.glob("evidence_workbench-*.whl")
    return built


def expected_members() -> set[str]:
    tracked = subprocess.run(
        ["git", "ls-files", *PACKAGED], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    keep = [p for p in tracked if p.endswith((".py", ".html", ".css", ".js", ".svg"))]
    return {
        "workbench/" + p if p.startswith(("templates/", "static/")) else p
        for p in keep
        if (ROOT / p).exists()
    }


def test_the_wheel_holds_every_module_template_and_static_file(wheel):
    members = set(zipfile.ZipFile(wheel).namelist())
    assert expected_members() - members == set()


def test_installed_from_the_wheel_it_migrates_passes_check_deploy_and_serves(
    wheel, tmp_path, deployment_database
):
    environment = tmp_path / "venv"
    venv.create(environment, with_pip=True)
    bin_dir = environment / "bin"
    env = production_env(deployment_database, tmp_path / "static")
    # The deployed profile proper: HTTPS redirect, HSTS and Secure cookies on.
    for name in ("SSL_REDIRECT", "COOKIES", "HSTS_SECONDS"):
        env.pop(f"DJANGO_SECURE_{name}")
    env.pop("PYTHONPATH", None)
    run([str(bin_dir / "python"), "-m", "pip", "install", "--quiet", str(wheel)], env, tmp_path)
    django_admin = str(bin_dir / "django-admin")
    check = run([django_admin, "check", "--deploy", "--fail-level", "WARNING"], env, tmp_path)
    assert "System check identified no issues" in check.stdout + check.stderr
    run([django_admin, "migrate", "--noinput"], env, tmp_path)
    run([django_admin, "collectstatic", "--noinput"], env, tmp_path)

    port = free_port()
    log = tmp_path / "gunicorn.log"
    url = f"http://127.0.0.1:{port}"
    with log.open("w") as out:
        web = subprocess.Popen(
            [str(bin_dir / "gunicorn"), "workbench.wsgi", "--bind", f"127.0.0.1:{port}"],
            env=env,
            cwd=tmp_path,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            wait_until_serving(url, web, log)
            proxied = {"X-Forwarded-Proto": "https"}
            request = urllib.request.Request(url + "/sign-in/", headers=proxied)
            with urllib.request.urlopen(request, timeout=20) as response:
                html = response.read().decode()
            assert 'name="password"' in html
            assert response.headers["Strict-Transport-Security"].startswith("max-age=31536000")
            stylesheet = html.split('href="/static/workbench/workbench.')[1].split('"')[0]
            static = urllib.request.Request(
                f"{url}/static/workbench/workbench.{stylesheet}", headers=proxied
            )
            with urllib.request.urlopen(static, timeout=20) as response:
                assert b".site-header" in response.read()
        finally:
            web.terminate()
            web.wait(timeout=20)
    installed = subprocess.run(
        [str(bin_dir / "python"), "-c", "import workbench; print(workbench.__file__)"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert str(environment) in installed, "the page came from the wheel, not the checkout"
