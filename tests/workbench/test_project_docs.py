"""The repository documents itself: its design is in docs/design.md, documented commands work."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
TRACKED = subprocess.run(
    ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=False
).stdout.split()
TEXT = [ROOT / p for p in TRACKED if p.endswith((".py", ".md", ".html", ".toml", "Makefile"))]


def test_nothing_points_at_a_design_document_outside_the_repository():
    outside = re.compile(r"DESIGN\.md|\.\./shared")
    this_file = Path(__file__).resolve()
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in TEXT
        if path.resolve() != this_file and path.exists()
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if outside.search(line)
    ]
    assert TEXT and offenders == []


def test_every_invariant_the_tests_cite_is_in_docs_design():
    design = (ROOT / "docs" / "design.md").read_text()
    numbered = set(re.findall(r"^(\d+)\. \*\*", design, flags=re.MULTILINE))
    cited = {"1", "2", "3", "4", "5", "6", "7", "8"}
    assert cited <= numbered
    for section in ("## Vocabulary", "### The six passes", "### Invariants", "### The flow"):
        assert section in design


def test_compiling_against_a_bundle_is_documented_with_its_public_key():
    commands = [
        line
        for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
        for line in path.read_text().splitlines()
        if "compile --bundle" in line
    ]
    assert commands and all("--public-key" in line for line in commands)


@pytest.mark.parametrize(
    ("target", "expected"),
    [("test-fast", '-m "not browser"'), ("test-lowest", ".venv-lowest/bin/python -m pytest")],
)
def test_every_phony_make_target_does_something(target, expected):
    makefile = (ROOT / "Makefile").read_text()
    phony = re.search(r"^\.PHONY: (.*)$", makefile, flags=re.MULTILINE)[1].split()
    assert target in phony
    plan = subprocess.run(
        ["make", "-n", "-W", "pyproject.toml", target],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert expected in plan.stdout
