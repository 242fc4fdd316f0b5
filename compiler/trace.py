"""The compile trace: one entry per decision, ids and reason codes only, never content.

Entries hold plain strings, not enum members: a dict of atomic values is not tracked by the
garbage collector, and a 100k-candidate compile makes 100k of them.
"""

from __future__ import annotations

from .codes import Outcome, Pass
from .models import TraceEntry


class Trace:
    """An append-only list of trace entries shared by the passes of one compile."""

    __slots__ = ("entries",)

    def __init__(self) -> None:
        self.entries: list[TraceEntry] = []

    def add(
        self,
        pass_: Pass,
        outcome: Outcome,
        item_id: str | None = None,
        reason: str | None = None,
        detail: str | None = None,
    ) -> None:
        self.entries.append(
            {
                "id": item_id,
                "pass": pass_.value,
                "outcome": outcome.value,
                "reason": None if reason is None else str(reason),
                "detail": None if detail is None else str(detail),
            }
        )
