"""Which packages the workbench wheel holds (everything else is in pyproject.toml).

The workbench's own apps are found by name, so a new app or sub-package needs no edit here.
The `compiler` package is not among them: it is the separate `evidence-compiler`
distribution (packaging/evidence-compiler), which the workbench declares as a dependency.
The templates and static files live at the repository root; the wheel carries them inside the
workbench package (workbench/templates, workbench/static), where the settings find them when
there is no checkout. Each of their folders is listed as a data package of its own (so
setuptools packages it knowingly instead of warning that it "would be ignored").
tests/deployment/test_wheel.py checks that the wheel holds every tracked .py, template and
static file of these apps, and no `compiler/`.
"""

import atexit
import shutil
import tempfile

from setuptools import find_namespace_packages, find_packages, setup

# A wheel holds the checkout's files as they are now: setuptools copies into build/lib and
# never removes what was deleted or renamed since the last build, which would ship it too (a
# renamed migration beside its new name). Each build gets a fresh build directory of its own,
# which also keeps two builds of the checkout at once out of each other's way.
BUILD_BASE = tempfile.mkdtemp(prefix="evidence-workbench-build-")
atexit.register(shutil.rmtree, BUILD_BASE, ignore_errors=True)

APPS = ["workers", "contracts", "scenarios", "publishing", "workbench"]
# Data folder at the repository root -> package inside `workbench`, and the files it carries.
DATA = {
    "templates": ["*.html"],
    "static": ["*.css", "*.js", "*.svg"],
}


def data_packages() -> dict[str, list[str]]:
    """`workbench.templates`, `workbench.templates.contracts`, … -> their file patterns."""
    packages = {}
    for folder, patterns in DATA.items():
        packages[f"workbench.{folder}"] = patterns
        for sub in find_namespace_packages(where=folder):
            packages[f"workbench.{folder}.{sub}"] = patterns
    return packages


setup(
    packages=[
        *find_packages(include=[name for app in APPS for name in (app, f"{app}.*")]),
        *data_packages(),
    ],
    package_dir={f"workbench.{folder}": folder for folder in DATA},
    package_data=data_packages(),
    options={"build": {"build_base": BUILD_BASE}},
)
