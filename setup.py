"""Which packages the workbench wheel holds (everything else is in pyproject.toml).

Every application package is found by name, so a new app or sub-package needs no edit here.
The templates and static files live at the repository root; the wheel carries them inside the
workbench package (workbench/templates, workbench/static), where the settings find them when
there is no checkout. tests/deployment/test_wheel.py checks that the wheel holds every tracked
.py, template and static file.
"""

from setuptools import find_packages, setup

APPS = ["compiler", "contracts", "scenarios", "publishing", "workbench"]

setup(
    packages=[
        *find_packages(include=[name for app in APPS for name in (app, f"{app}.*")]),
        "workbench.templates",
        "workbench.static",
    ],
    package_dir={"workbench.templates": "templates", "workbench.static": "static"},
    package_data={
        "workbench.templates": ["**/*.html"],
        "workbench.static": ["**/*.css", "**/*.js", "**/*.svg"],
    },
)
