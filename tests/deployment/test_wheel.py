"""The built wheels are deployable artefacts. The workbench's wheel holds every module,
template and static file of its apps and none of the compiler's packages: it requires
`evidence-compiler` at exactly the compiler's version instead. Installed together into a
fresh virtual environment (no checkout on its path), the two wheels migrate, pass
`check --deploy` with no warning, and gunicorn serves pages and static files, with `compiler`
imported from the evidence-compiler distribution."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import urllib.request
import venv
import zipfile
from pathlib import Path

import pytest
from deployment_support import ROOT, free_port, production_env, run, wait_until_serving

PACKAGED = ("contracts/", "scenarios/", "publishing/", "workbench/", "templates/", "static/")


@pytest.fixture(scope="module")
def wheels(tmp_path_factory) -> dict[str, Path]:
    """Both wheels of this checkout, as `make dist` builds them."""
    out = tmp_path_factory.mktemp("wheels")
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out),
             ".", "packaging/evidence-compiler"]  # fmt: skip
    run(build, dict(os.environ))
    (workbench,) = out.glob("evidence_workbench-*.whl")
    (compiler,) = out.glob("evidence_compiler-*.whl")
    return {"workbench": workbench, "compiler": compiler}


@pytest.fixture(scope="module")
def wheel(wheels) -> Path:
    return wheels["workbench"]


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


def compiler_version() -> str:
    text = (ROOT / "compiler" / "version.py").read_text()
    return re.search(r'COMPILER_VERSION\s*=\s*"([^"]+)"', text)[1]


def test_the_wheel_holds_every_module_template_and_static_file(wheel):
    members = set(zipfile.ZipFile(wheel).namelist())
    assert expected_members() - members == set()
    # And no module the checkout does not track: setuptools' build/ cache keeps files
    # deleted or renamed since, and a renamed migration shipped twice stops `migrate`.
    packaged = {m for m in members if m.startswith(PACKAGED) or m.startswith("workbench/")}
    assert {m for m in packaged if m.endswith(".py")} - expected_members() == set()


def test_the_wheel_holds_no_compiler_package_and_requires_evidence_compiler_at_its_version(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        meta = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA")))
    compiler_packages = {"compiler", "compiler_trust", "compiler_tools", "compiler_adapters"}
    assert not [n for n in names if n.split("/")[0] in compiler_packages]
    requires = [line.split(": ", 1)[1] for line in meta.decode().splitlines()
                if line.startswith("Requires-Dist: evidence-compiler")]  # fmt: skip
    assert requires == [f"evidence-compiler=={compiler_version()}"]


def test_installed_from_the_two_wheels_it_migrates_passes_check_deploy_and_serves(
    wheels, tmp_path, deployment_database
):
    environment = tmp_path / "venv"
    venv.create(environment, with_pip=True)
    bin_dir = environment / "bin"
    env = production_env(deployment_database, tmp_path / "static")
    # The deployed profile proper: HTTPS redirect, HSTS and Secure cookies on.
    for name in ("SSL_REDIRECT", "COOKIES", "HSTS_SECONDS"):
        env.pop(f"DJANGO_SECURE_{name}")
    env.pop("PYTHONPATH", None)
    python = str(bin_dir / "python")
    # The workbench's wheel alone leaves its requirement unmet: it carries no compiler.
    run([python, "-m", "pip", "install", "--quiet", "--no-deps", str(wheels["workbench"])],
        env, tmp_path)  # fmt: skip
    unmet = subprocess.run([python, "-m", "pip", "check"], env=env, cwd=tmp_path,
                           capture_output=True, text=True)  # fmt: skip
    assert unmet.returncode == 1
    assert "evidence-workbench 0.1.0 requires evidence-compiler" in unmet.stdout
    # Both wheels in one call, as docs/deployment.md says: pip takes evidence-compiler from
    # its wheel file (no index has it) and the rest from the index.
    run([python, "-m", "pip", "install", "--quiet", str(wheels["compiler"]),
         str(wheels["workbench"])], env, tmp_path)  # fmt: skip
    run([python, "-m", "pip", "check"], env, tmp_path)
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
    probe = (
        "import importlib.metadata as m, compiler, workbench; "
        "print(workbench.__file__); print(compiler.__file__); "
        "print(m.packages_distributions()['compiler'])"
    )
    installed = subprocess.run(
        [python, "-c", probe], env=env, cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert installed[0].startswith(str(environment)), "the page came from the wheel"
    assert installed[1].startswith(str(environment)), "and the compiler from its own wheel"
    assert installed[2] == "['evidence-compiler']"
