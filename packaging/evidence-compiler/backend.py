"""A PEP 517 build backend, standard library only, for the `evidence-compiler` distribution.

The package directory of the repository (`compiler/`) is two levels up from here, and is
also what the workbench distribution ships. Setuptools cannot point a project outside its own
directory in an isolated build, so this backend copies `compiler/*.py` into the wheel itself:
from the repository when built in a checkout, from its own copy when built from the sdist it
made. The metadata comes from `pyproject.toml` beside this file; the version from
`compiler/version.py`. Archives are reproducible (sorted names, fixed timestamps).

`pip install -e packaging/evidence-compiler` (PEP 660, what the Makefile's development
install does) writes no copy: the editable wheel holds a `.pth` line that puts a finder for
the one name `compiler` on `sys.meta_path`, resolving it to the checkout's `compiler/`. Only
that package becomes importable through it, never the rest of the repository root.
"""

from __future__ import annotations

import base64
import hashlib
import io
import re
import tarfile
import tomllib
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PACKAGE = "compiler"
EPOCH = (1980, 1, 1, 0, 0, 0)


def _package_root() -> Path:
    for candidate in (HERE / PACKAGE, HERE.parents[1] / PACKAGE):
        if (candidate / "__init__.py").is_file():
            return candidate
    raise RuntimeError(f"no {PACKAGE}/ package beside {HERE} or at the repository root")


def package_files() -> list[tuple[str, Path]]:
    """`(archive name, path)` of every module of the package, sorted."""
    root = _package_root()
    return [
        (f"{PACKAGE}/{p.relative_to(root).as_posix()}", p)
        for p in sorted(root.rglob("*.py"))
        if "__pycache__" not in p.parts
    ]


def _project() -> dict:
    return tomllib.loads((HERE / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def version() -> str:
    text = (_package_root() / "version.py").read_text(encoding="utf-8")
    return re.search(r'COMPILER_VERSION\s*=\s*"([^"]+)"', text).group(1)


def _dist_name() -> str:
    return re.sub(r"[-_.]+", "_", _project()["name"]).lower()


def metadata() -> str:
    project = _project()
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {version()}",
        f"Summary: {project['description']}",
        f"Requires-Python: {project['requires-python']}",
    ]
    lines += [f"Requires-Dist: {r}" for r in project["dependencies"]]
    for extra, requirements in project.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {r}; extra == "{extra}"' for r in requirements]
    return "\n".join(lines) + "\n"


def _entry_points() -> str:
    scripts = _project().get("scripts", {})
    return "[console_scripts]\n" + "".join(f"{k} = {v}\n" for k, v in scripts.items())


def _zip_write(archive: zipfile.ZipFile, name: str, data: bytes) -> None:
    info = zipfile.ZipInfo(name, EPOCH)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    archive.writestr(info, data)


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


# --------------------------------------------------------------------------- PEP 517


def get_requires_for_build_wheel(config_settings=None) -> list[str]:
    return []


def get_requires_for_build_sdist(config_settings=None) -> list[str]:
    return []


def get_requires_for_build_editable(config_settings=None) -> list[str]:
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None) -> str:
    return _write_wheel(
        wheel_directory, [(arc, path.read_bytes()) for arc, path in package_files()]
    )


EDITABLE_FINDER = """\
\"\"\"evidence-compiler installed in editable mode: `compiler` is {root!r}.\"\"\"

import sys
from importlib.machinery import PathFinder

ROOT = {parent!r}


class CompilerFinder:
    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        if fullname != {package!r}:
            return None
        return PathFinder.find_spec(fullname, [ROOT])


def install():
    if CompilerFinder not in sys.meta_path:
        sys.meta_path.append(CompilerFinder)
"""


def build_editable(wheel_directory, config_settings=None, metadata_directory=None) -> str:
    root = _package_root()
    module = "_evidence_compiler_editable"
    finder = EDITABLE_FINDER.format(root=str(root), parent=str(root.parent), package=PACKAGE)
    return _write_wheel(
        wheel_directory,
        [
            (f"{module}.py", finder.encode()),
            (f"{module}.pth", f"import {module}; {module}.install()\n".encode()),
        ],
    )


def _write_wheel(wheel_directory, files: list[tuple[str, bytes]]) -> str:
    name, ver = _dist_name(), version()
    dist_info = f"{name}-{ver}.dist-info"
    files += [
        (f"{dist_info}/METADATA", metadata().encode()),
        (
            f"{dist_info}/WHEEL",
            b"Wheel-Version: 1.0\nGenerator: evidence-compiler backend\n"
            b"Root-Is-Purelib: true\nTag: py3-none-any\n",
        ),
        (f"{dist_info}/entry_points.txt", _entry_points().encode()),
    ]
    record = [_record_line(arc, data) for arc, data in files] + [f"{dist_info}/RECORD,,"]
    filename = f"{name}-{ver}-py3-none-any.whl"
    with zipfile.ZipFile(Path(wheel_directory) / filename, "w") as archive:
        for arc, data in files:
            _zip_write(archive, arc, data)
        _zip_write(archive, f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode())
    return filename


def build_sdist(sdist_directory, config_settings=None) -> str:
    name, ver = _dist_name(), version()
    top = f"{name}-{ver}"
    files = [(f"{top}/{arc}", path.read_bytes()) for arc, path in package_files()]
    files += [(f"{top}/{f}", (HERE / f).read_bytes()) for f in ("pyproject.toml", "backend.py")]
    files.append((f"{top}/PKG-INFO", metadata().encode()))
    filename = f"{top}.tar.gz"
    with tarfile.open(Path(sdist_directory) / filename, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for arc, data in sorted(files):
            info = tarfile.TarInfo(arc)
            info.size, info.mode, info.mtime = len(data), 0o644, 315532800
            tar.addfile(info, io.BytesIO(data))
    return filename
