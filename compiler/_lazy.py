"""A package surface whose names load on first use.

`python -m compiler_tools compile` must import only what a compile needs (no pydantic for
valid input, no signing code): each package's `__init__` lists where its names live and
imports a module only when one of its names is first read.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def lazy_surface(
    package: str,
    homes: Mapping[str, Iterable[str]],
    namespaces: Mapping[str, str] | None = None,
) -> Callable[[str], Any]:
    """The module `__getattr__` of `package`, given each home module's public names, and the
    names that stand for a whole module (a sub-API with many names of its own)."""
    home_of = {name: module for module, names in homes.items() for name in names}
    namespaces = namespaces or {}

    def __getattr__(name: str) -> Any:
        if name in namespaces:
            value = importlib.import_module(namespaces[name])
        elif name in home_of:
            value = getattr(importlib.import_module(home_of[name]), name)
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
