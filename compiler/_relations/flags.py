"""What a reviewer is shown as a possible contract mistake, as cause keys two versions of a
contract can be compared by; and the catalogue check of a contract.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

FlagKey = tuple[str, str, str, str]
"""(operator, proposition or "", kind, cause): no item ids, so that the same cause raised by
two versions of a contract, or by two scenarios, is one key."""

CORPUS = "corpus"
"""The operator of a corpus-derived finding's key (it has no perturbation)."""


def flag_key(verdict: Mapping[str, Any], operator: str) -> FlagKey:
    return (operator, verdict.get("proposition") or "", verdict["kind"], verdict.get("cause") or "")


def review_flags(sweep_report: Mapping[str, Any]) -> set[FlagKey]:
    """The review flags of one scenario's sweep (`compiler.sweep`'s report): every
    violation, every finding that names a cause (the contract probes' and the weak-class
    promotion's), and every corpus-derived finding. `review_flags(mutant) -
    review_flags(original)` is what a change to the contract newly raises."""
    flags = set()
    for row in sweep_report["perturbations"]:
        for verdict in row["verdicts"]:
            if verdict["kind"] == "violation" or (
                verdict["kind"] == "finding" and verdict.get("cause")
            ):
                flags.add(flag_key(verdict, row["operator"]))
    for finding in sweep_report.get("corpus_findings", ()):
        flags.add(flag_key(finding, CORPUS))
    return flags


def catalogue_problems(contract: Any, catalogue: Mapping[str, Any] | Iterable[str]) -> list[str]:
    """One message per accepted class the catalogue does not hold (`catalogue`: its class
    keys, or class key -> authority tier). Empty when the catalogue is empty: no catalogue,
    nothing to check against."""
    known = set(catalogue)
    if not known:
        return []
    return [
        f"proposition '{p.key}' accepts '{cls}', which is not in the source-class catalogue"
        for p in contract.propositions
        for cls in p.accepted_classes
        if cls not in known
    ]
