"""Print pyproject.toml's direct dependencies (runtime and dev) pinned at their lower bounds.

`make test-lowest` installs exactly these into a separate venv, so every `>=` the project
declares is one it has been tested with. A dependency without a lower bound is an error:
there would be nothing to test. The distributions this repository builds itself
(packaging/NAME/pyproject.toml: evidence-compiler) are left out: no index has them, and the
Makefile installs them from the checkout, at the exact version the workbench pins.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

REQUIREMENT = re.compile(r"^\s*(?P<name>[A-Za-z0-9._-]+(\[[^\]]+\])?)\s*(?P<spec>.*)$")
LOWER_BOUND = re.compile(r">=\s*(?P<version>[^,;\s]+)")


def pinned(requirement: str) -> str:
    match = REQUIREMENT.match(requirement)
    bound = LOWER_BOUND.search(match["spec"]) if match else None
    if bound is None:
        raise SystemExit(f"{requirement!r} declares no lower bound (>=) to test")
    return f"{match['name']}=={bound['version']}"


def local_distributions(root: Path) -> set[str]:
    """The names of the distributions built from this repository (packaging/*/)."""
    return {
        canonical(tomllib.loads(p.read_text())["project"]["name"])
        for p in sorted(root.glob("packaging/*/pyproject.toml"))
    }


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def main() -> None:
    root = Path(__file__).parents[1]
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    requirements = project["dependencies"] + project["optional-dependencies"]["dev"]
    local = local_distributions(root)
    external = [r for r in requirements if canonical(REQUIREMENT.match(r)["name"]) not in local]
    sys.stdout.write("".join(f"{pinned(r)}\n" for r in external))


if __name__ == "__main__":
    main()
