"""What the standard review shows for one scenario under one contract: its sweep's review
flags (each with the sentence a reviewer reads), and the catalogue's problems.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from compiler.models import CompileInput, CompileOutput, Contract

Flag = tuple[str, str, str, str]


def run_sweep(
    document: CompileInput,
    weak_classes: tuple[str, ...],
    catalogue: Mapping[str, int],
    compile_fn: Callable[[CompileInput], CompileOutput],
) -> dict[str, Any]:
    from compiler.perturb import sweep

    return sweep(document, weak_classes=weak_classes, compile_fn=compile_fn)


def flags(report: Mapping[str, Any]) -> dict[Flag, str]:
    """Each review flag of a sweep with the first message that raised it."""
    found: dict[Flag, str] = {}
    for row in report["perturbations"]:
        for verdict in row["verdicts"]:
            if verdict["kind"] == "violation":
                key = (row["operator"], verdict["proposition"] or "", verdict["kind"],
                       verdict["message"])  # fmt: skip
                found.setdefault(key, verdict["message"])
    return found


def catalogue_problems(contract: Contract, catalogue: Mapping[str, int]) -> list[str]:
    if not catalogue:
        return []
    return [
        f"`{p.key}` accepts `{cls}`, which is not a class of the catalogue"
        for p in contract.propositions
        for cls in p.accepted_classes
        if cls not in catalogue
    ]
