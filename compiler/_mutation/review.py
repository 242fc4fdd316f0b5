"""What the standard review shows for one scenario under one contract: its sweep, the review
flags of that sweep (`compiler.review_flags`), each with the sentence a reviewer
reads, and the catalogue's problems.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from compiler._input import CompileInput
from compiler._output import CompileOutput
from compiler._relations.flags import CORPUS, FlagKey, catalogue_problems, flag_key, review_flags

__all__ = ["FlagKey", "catalogue_problems", "flags", "run_sweep"]


def run_sweep(
    document: CompileInput,
    weak_classes: tuple[str, ...],
    catalogue: Mapping[str, int],
    compile_fn: Callable[[CompileInput], CompileOutput],
) -> dict[str, Any]:
    from compiler._sweep import sweep

    return sweep(
        document, weak_classes=weak_classes, compile_fn=compile_fn, catalogue=dict(catalogue)
    )


def flags(report: Mapping[str, Any]) -> dict[FlagKey, str]:
    """The sweep's review flags, each with the first message that raised it (for a reason a
    reader understands; the keys alone carry no item ids and no sentence)."""
    keys = review_flags(report)
    messages: dict[FlagKey, str] = {}
    verdicts = [(v, row["operator"]) for row in report["perturbations"] for v in row["verdicts"]]
    verdicts += [(v, CORPUS) for v in report.get("corpus_findings", ())]
    for verdict, operator in verdicts:
        key = flag_key(verdict, operator)
        if key in keys:
            messages.setdefault(key, verdict["message"])
    return messages
