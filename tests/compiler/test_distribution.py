"""The standalone `evidence-compiler` distribution, built and used the way a production
retrieval service or a CI job uses it: the wheel is built from this checkout
(packaging/evidence-compiler, as `make dist-compiler` does), installed into a fresh virtual
environment that has no Django, and its console script runs `verify-bundle`,
`compile --bundle --receipt` and `test` there; the compiler's own tests (tests/compiler) run
there too, against the installed wheel.

Marked `distribution`; it installs pydantic, rfc8785, cryptography, orjson, PyYAML, pytest and
Hypothesis into that environment through pip's configured index (pip's cache makes a rerun
take seconds). It is part of the normal suite and never skipped."""

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
from packaging.requirements import Requirement

pytestmark = pytest.mark.distribution

PACKAGING = ROOT / "packaging" / "evidence-compiler"
PACKAGES = ("compiler", "compiler_trust", "compiler_tools", "compiler_adapters")
HERE = Path(__file__).resolve().parent
ADAPTER_TESTS = ("test_adapters_langchain.py", "test_adapters_llamaindex.py")


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


def test_the_wheel_holds_exactly_the_compiler_packages_of_this_checkout(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        package = {n: archive.read(n) for n in names if not n.startswith("evidence_compiler-")}
        meta = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        entry_points = archive.read(next(n for n in names if n.endswith("entry_points.txt")))
    source = {
        p.relative_to(ROOT).as_posix(): p.read_bytes()
        for name in PACKAGES
        for p in (ROOT / name).rglob("*.py")
        if "__pycache__" not in p.parts
    }
    assert package == source
    assert {n.split("/")[0] for n in names} == {*PACKAGES, "evidence_compiler-0.1.0.dist-info"}
    assert b"evidence-compiler = compiler_tools.__main__:main" in entry_points
    requires = [Requirement(line.split(": ", 1)[1]) for line in meta.splitlines()
                if line.startswith("Requires-Dist: ") and "extra ==" not in line]  # fmt: skip
    assert sorted(map(str, requires)) == sorted(
        str(Requirement(r))
        for r in ["pydantic>=2.11,<3", "rfc8785>=0.1.4,<0.2", "cryptography>=42", "orjson>=3.10.7"]
    )
    # The workbench requires this distribution at exactly its version, and declares the
    # same lines for what it imports of these packages itself.
    workbench = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert "evidence-compiler==0.1.0" in workbench
    assert {str(r) for r in requires} <= {str(Requirement(r)) for r in workbench}
    extras = [Requirement(line.split(": ", 1)[1]) for line in meta.splitlines()
              if line.startswith("Requires-Dist: ") and "extra ==" in line]  # fmt: skip
    assert sorted((str(r.name), str(r.specifier), str(r.marker)) for r in extras) == [
        ("langchain-core", ">=0.3", 'extra == "langchain"'),
        ("llama-index-core", ">=0.12", 'extra == "llamaindex"'),
        ("prometheus-client", ">=0.26", 'extra == "serve"'),
        ("pyyaml", ">=6.0.2", 'extra == "yaml"'),
        ("waitress", ">=3.0.2", 'extra == "serve"'),
    ]
    assert "pyyaml>=6.0.2" in workbench
    # The workbench's tests run `serve` and test the adapters against their libraries, so its
    # development dependencies hold those extras' lines.
    dev = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert {"waitress>=3.0.2", "prometheus-client>=0.26"} <= set(dev["dev"])
    assert {"langchain-core>=0.3", "llama-index-core>=0.12"} <= set(dev["dev"])


def test_building_twice_gives_the_same_wheel(wheel, tmp_path):
    assert build_wheel(tmp_path).read_bytes() == wheel.read_bytes()


def test_the_sdist_builds_the_same_wheel_away_from_the_checkout(wheel, tmp_path):
    import tarfile

    subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--outdir", str(tmp_path), str(PACKAGING)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    (sdist,) = tmp_path.glob("evidence_compiler-*.tar.gz")
    with tarfile.open(sdist) as archive:
        archive.extractall(tmp_path / "unpacked", filter="data")
    (tree,) = (tmp_path / "unpacked").iterdir()
    assert not any(p.is_symlink() for p in tree.iterdir()), "the sdist holds the files"
    out = tmp_path / "out"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out),
                    str(tree)], check=True, capture_output=True)  # fmt: skip
    assert next(out.glob("*.whl")).read_bytes() == wheel.read_bytes()


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    """A fresh virtual environment with the wheel (and its yaml and serve extras), pytest,
    Hypothesis and grimp (the import-graph test): what the compiler's own tests need, and no
    Django."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
         "--quiet", "--disable-pip-version-check", f"{wheel}[yaml,serve]", "pytest",
         "hypothesis", "grimp"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr
    return venv


def test_installed_without_django_it_verifies_compiles_with_a_receipt_and_tests(venv, tmp_path):
    python = venv / "bin" / "python"
    work = tmp_path / "work"  # not the checkout, so `compiler` comes from the venv
    work.mkdir()
    probe = subprocess.run(
        [str(python), "-c", "import importlib.util as u, compiler, compiler_trust, compiler_tools, "
         "compiler_adapters as a; "
         "print(compiler.__file__, compiler_trust.__file__, compiler_tools.__file__, a.__file__); "
         "print(u.find_spec('django') is None)"],
        cwd=work, capture_output=True, text=True, check=True,
    )  # fmt: skip
    *locations, no_django = probe.stdout.split()
    assert all(Path(p).is_relative_to(venv) for p in locations) and no_django == "True"
    # Without its extra, an adapter says which one to install.
    adapter = subprocess.run([str(python), "-c", "import compiler_adapters.langchain"], cwd=work,
                             capture_output=True, text=True)  # fmt: skip
    assert adapter.returncode == 1
    assert adapter.stderr.splitlines()[-1] == (
        "ImportError: compiler_adapters.langchain needs langchain-core: "
        "pip install 'evidence-compiler[langchain]'"
    )

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


def test_the_compilers_own_tests_pass_with_the_wheel_and_no_django(venv, tmp_path):
    """tests/compiler needs only the wheel, pytest and Hypothesis: neither Django nor the
    workbench's apps. Left out: this module, which builds the wheel, and the adapters' tests,
    which need the retrieval libraries of the `langchain` and `llamaindex` extras (they run in
    the workbench's environment, which has both; a test above checks that each adapter names
    its extra when the library is missing)."""
    python = str(venv / "bin" / "python")
    assert subprocess.run([python, "-c", "import django"], capture_output=True).returncode == 1
    tested = subprocess.run(
        [python, "-m", "pytest", str(ROOT / "tests" / "compiler"), "-p", "no:cacheprovider",
         "-q", "-x", f"--ignore={Path(__file__).resolve()}",
         *(f"--ignore={HERE / name}" for name in ADAPTER_TESTS)],
        cwd=tmp_path, capture_output=True, text=True,  # away from the checkout's `compiler`
    )  # fmt: skip
    assert tested.returncode == 0, tested.stdout[-4000:] + tested.stderr[-4000:]
    assert re.search(r"\b\d{3,} passed\b", tested.stdout), tested.stdout[-2000:]
