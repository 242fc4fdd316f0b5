"""The compiler's four packages import in one direction inside themselves too: no module
imports, even from inside a function, a module that imports it back (a circle hides which of
the two is the lower layer). `lint-imports` keeps the packages layered against each other;
this keeps each package free of circles, module by module.

Imports under `if TYPE_CHECKING:` count as well: they name a module's types, and a circle
through them is still two modules that each need the other to be read."""

from __future__ import annotations

import grimp
import pytest

PACKAGES = ("compiler", "compiler_trust", "compiler_tools", "compiler_adapters")


def circles(graph: grimp.ImportGraph, package: str) -> list[list[str]]:
    """The strongly connected sets of more than one module inside `package` (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if imported.split(".")[0] != package:
                continue
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            members = []
            while True:
                member = stack.pop()
                members.append(member)
                if member == module:
                    break
            if len(members) > 1:
                found.append(sorted(members))

    for module in sorted(m for m in graph.modules if m.split(".")[0] == package):
        if module not in index:
            visit(module)
    return found


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    # The checkout's packages (pytest runs from its root, which is first on the path).
    return grimp.build_graph(*PACKAGES, cache_dir=None)


@pytest.mark.parametrize("package", PACKAGES)
def test_no_module_of_a_package_imports_itself_back(graph, package):
    assert circles(graph, package) == []


def test_a_circle_is_found_when_there_is_one():
    graph = grimp.ImportGraph()
    for module in ("compiler", "compiler.a", "compiler.b", "compiler.c"):
        graph.add_module(module)
    graph.add_import(importer="compiler.a", imported="compiler.b")
    graph.add_import(importer="compiler.b", imported="compiler.a")
    graph.add_import(importer="compiler.c", imported="compiler.a")
    assert circles(graph, "compiler") == [["compiler.a", "compiler.b"]]
