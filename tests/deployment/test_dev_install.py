"""The development install (`make .venv/.installed`, also what `.ci/run` and `make
test-lowest` use): evidence-compiler comes from the checkout, editable, and the lowest-versions
run asks no index for it."""

from __future__ import annotations

import subprocess
import sys
import tomllib

from deployment_support import ROOT

PACKAGING = ROOT / "packaging" / "evidence-compiler"
PACKAGES = ("compiler", "compiler_trust", "compiler_tools", "compiler_adapters")


def test_the_editable_compiler_exposes_the_checkouts_packages_and_nothing_else(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
         "--no-deps", "--disable-pip-version-check", "-e", str(PACKAGING)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr
    work = tmp_path / "elsewhere"  # not the checkout: only the editable install can find them
    work.mkdir()
    probe = subprocess.run(
        [str(python), "-c", "import importlib.util as u, os; "
         "[print(os.path.realpath(u.find_spec(n).origin)) for n in "
         f"{PACKAGES}]; "
         "print([n for n in ('workbench', 'contracts', 'tests') if u.find_spec(n)])"],
        cwd=work, capture_output=True, text=True, check=True,
    ).stdout.splitlines()  # fmt: skip
    assert probe == [
        *(str(ROOT / name / "__init__.py") for name in PACKAGES),
        "[]",
    ]
    site = next((venv / "lib").glob("python3*/site-packages"))
    assert not [name for name in PACKAGES if (site / name).exists()], "editable: no copies"


def test_the_lowest_versions_leave_evidence_compiler_to_the_checkout():
    lowest = subprocess.run(
        [sys.executable, str(ROOT / ".ci" / "lowest_requirements.py")],
        capture_output=True, text=True, check=True,
    ).stdout.splitlines()  # fmt: skip
    assert not [line for line in lowest if line.startswith("evidence-compiler")]
    assert "pydantic==2.11" in lowest and "django==6.1" in lowest
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = project["dependencies"] + project["optional-dependencies"]["dev"]
    assert len(lowest) == len(declared) - 1  # every other direct dependency, pinned
