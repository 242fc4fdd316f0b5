"""Print pyproject.toml's direct dependencies (runtime and dev) pinned at their lower bounds.

`make test-lowest` installs exactly these into a separate venv, so every `>=` the project
declares is one it has been tested with. A dependency without a lower bound is an error:
there would be nothing to test.
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


def main() -> None:
    project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]
    requirements = project["dependencies"] + project["optional-dependencies"]["dev"]
    sys.stdout.write("".join(f"{pinned(r)}\n" for r in requirements))


if __name__ == "__main__":
    main()
