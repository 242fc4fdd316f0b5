"""The standalone `evidence-compiler` distribution, built and used the way a production
retrieval service or a CI job uses it: the wheel is built from this checkout
(packaging/evidence-compiler, as `make dist-compiler` does), installed into a fresh virtual
environment that has no Django, and its console script runs `verify-bundle`,
`compile --bundle --receipt` and `test` there.

Marked `distribution`; it installs pydantic, rfc8785, cryptography, orjson and PyYAML into that
environment through pip's configured index (pip's cache makes a rerun take seconds). It is
part of the normal suite and never skipped."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from atlas_bundle import ROOT, atlas_bundle, atlas_request, key_set

pytestmark = pytest.mark.distribution

PACKAGING = ROOT / "packaging" / "evidence-compiler"


def build_wheel(out: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out),
         str(PACKAGING)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    (wheel,) = out.glob("evidence_compiler-*-py3-none-any.whl")
    return wheel


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("dist"))


def test_the_wheel_holds_exactly_the_compiler_package_of_this_checkout(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        package = {n: archive.read(n) for n in names if not n.startswith("evidence_compiler-")}
        meta = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        entry_points = archive.read(next(n for n in names if n.endswith("entry_points.txt")))
    source = {
        f"compiler/{p.relative_to(ROOT / 'compiler').as_posix()}": p.read_bytes()
        for p in (ROOT / "compiler").rglob("*.py")
        if "__pycache__" not in p.parts
    }
    assert package == source
    assert {n.split("/")[0] for n in names} == {"compiler", "evidence_compiler-0.1.0.dist-info"}
    assert b"evidence-compiler = compiler.cli:main" in entry_points
    requires = [line.split(": ", 1)[1] for line in meta.splitlines()
                if line.startswith("Requires-Dist: ") and "extra ==" not in line]  # fmt: skip
    assert requires == [
        "pydantic>=2.11,<3",
        "rfc8785>=0.1.4,<0.2",
        "cryptography>=42",
        "orjson>=3.10.7",
    ]
    # The workbench requires this distribution at exactly its version, and declares the
    # same lines for what it imports of these packages itself.
    workbench = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert "evidence-compiler==0.1.0" in workbench
    assert set(requires) <= set(workbench)
    assert 'Requires-Dist: pyyaml>=6.0.2; extra == "yaml"' in meta
    assert "pyyaml>=6.0.2" in workbench


def test_building_twice_gives_the_same_wheel(wheel, tmp_path):
    assert build_wheel(tmp_path).read_bytes() == wheel.read_bytes()


def test_the_sdist_builds_the_same_wheel_away_from_the_checkout(wheel, tmp_path):
    import tarfile

    sdist = subprocess.run(
        [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import backend; "
         "print(backend.build_sdist(sys.argv[2]))", str(PACKAGING), str(tmp_path)],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    with tarfile.open(tmp_path / sdist) as archive:
        archive.extractall(tmp_path / "unpacked", filter="data")
    (tree,) = (tmp_path / "unpacked").iterdir()
    out = tmp_path / "out"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out),
                    str(tree)], check=True, capture_output=True)  # fmt: skip
    assert next(out.glob("*.whl")).read_bytes() == wheel.read_bytes()


def test_installed_without_django_it_verifies_compiles_with_a_receipt_and_tests(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
         "--disable-pip-version-check", f"{wheel}[yaml]"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr
    work = tmp_path / "work"  # not the checkout, so `compiler` comes from the venv
    work.mkdir()
    probe = subprocess.run(
        [str(python), "-c", "import importlib.util as u, compiler; "
         "print(compiler.__file__); print(u.find_spec('django') is None)"],
        cwd=work, capture_output=True, text=True, check=True,
    )  # fmt: skip
    location, no_django = probe.stdout.split()
    assert Path(location).is_relative_to(venv) and no_django == "True"

    bundle = work / "atlas.bundle.json"
    bundle.write_bytes(atlas_bundle())
    keys = key_set(work / "keys")
    request = work / "request.json"
    request.write_text(json.dumps(atlas_request()))
    cli = str(venv / "bin" / "evidence-compiler")

    def run(*argv: str | Path) -> subprocess.CompletedProcess:
        return subprocess.run([cli, *map(str, argv)], cwd=work, capture_output=True, text=True)

    verified = run("verify-bundle", bundle, "--public-key", keys)
    assert verified.returncode == 0, verified.stderr
    assert verified.stdout.startswith("valid: credit.review.continuation version 3")

    compiled = run("compile", request, "--bundle", bundle, "--public-key", keys,
                   "--receipt", work / "receipt.json")  # fmt: skip
    assert compiled.returncode == 0, compiled.stderr
    receipt = json.loads((work / "receipt.json").read_text())
    assert receipt["plan_id"] == json.loads(compiled.stdout)["plan_id"]
    assert receipt["format"] == "evidence-compiler.receipt/2"
    assert "content" not in receipt["candidates"]["fields"]

    junit = work / "junit.xml"
    tested = run("test", ROOT / "examples" / "tests" / "credit.review.continuation",
                 "--junit-xml", junit)  # fmt: skip
    assert tested.returncode == 0, tested.stdout + tested.stderr
    held = re.search(r"passed: (\d+) of (\d+) hold", tested.stdout)
    assert held and held[1] == held[2], tested.stdout  # every testcase holds
    assert junit.read_text().count("<testcase ") == int(held[2])
    assert run("test", bundle, "--public-key", keys).returncode == 0
