"""Compiling what the pushed-down query returned (`compiler.pushdown`): the rows rebuilt into
candidates and compiled by the ordinary pipeline, which re-checks every one of them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from compiler._codes import Outcome, Pass
from compiler._input import Contract, Directory, Request
from compiler._output import CompileOutput
from compiler._pipeline import compile_input
from compiler._validate_input import load_input

DIFFERING_FIELDS: tuple[str, ...] = ("rejected", "trace")
"""The output fields a pushed-down compile may not share with a compile of the whole pool:
candidates the query does not return are neither traced nor listed as rejected. Every other
field (packet, slots, plan id, valid_until, blocking, refusal...) is the same."""


@dataclass(frozen=True, slots=True)
class PushdownResult:
    output: CompileOutput
    loaded: int
    """How many rows the query returned."""
    pushed_admitted: frozenset[str]
    """The ids the query itself flagged admitted."""
    admitted: frozenset[str] | None
    """U as the in-memory admission pass found it on the loaded rows (None: the request was
    refused before admission)."""

    @property
    def mismatched(self) -> frozenset[str]:
        """Ids on which the query and the in-memory check disagree (the seed's "permission
        mismatch at independent validation"): always empty unless the adapter is wrong."""
        if self.admitted is None:
            return frozenset()
        return self.pushed_admitted ^ self.admitted


Row = tuple[str, Any]
"""(document, admitted) as the query returns it."""


def compile_rows(
    request: Request,
    contract: Contract,
    rows: Iterable[Row],
    *,
    directory: Directory | None = None,
) -> PushdownResult:
    """Rebuild candidates from the query's rows and compile them with the normal pipeline.

    The rows go through the same validation and admission as any input: a row the query should
    not have returned is rejected as usual, never trusted. Request, contract and directory are
    validated again from their JSON form, so the cross-checks that span them (an expected
    policy) run exactly as for a whole document.
    """
    candidates: list[Any] = []
    pushed: set[str] = set()
    for document, flagged in rows:
        candidate = json.loads(document)
        candidates.append(candidate)
        if flagged:
            pushed.add(candidate["id"])
    compiled = load_input(
        {
            "request": request.model_dump(mode="json"),
            "contract": contract.model_dump(mode="json"),
            "directory": (directory or Directory()).model_dump(mode="json"),
            "candidates": candidates,
        }
    )
    output = compile_input(compiled)
    return PushdownResult(output, len(candidates), frozenset(pushed), admitted_ids(output))


def admitted_ids(output: CompileOutput) -> frozenset[str] | None:
    """U from a compile's trace, or None when the compile was refused before admission."""
    checked = False
    admitted: set[str] = set()
    for entry in output.trace:
        if entry["pass"] == Pass.TYPE_CHECK.value and entry["outcome"] == Outcome.CHECKED.value:
            checked = True
        elif entry["pass"] == Pass.ADMIT.value and entry["outcome"] == Outcome.ADMITTED.value:
            admitted.add(str(entry["id"]))
    return frozenset(admitted) if checked else None


def comparable(output: CompileOutput) -> dict[str, Any]:
    """The output as JSON without the fields a pushed-down compile legitimately differs in."""
    return output.model_dump(mode="json", by_alias=True, exclude=set(DIFFERING_FIELDS))
