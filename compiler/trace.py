"""The compile trace: one entry per decision, ids and reason codes only, never content.

Request-level passes add entries one at a time. The admission pass decides for every candidate
and hands the trace a *segment* that writes its entries only when the trace is read (see
`records`). Entries hold plain strings, not enum members.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from .codes import Outcome, Pass
from .models import TraceEntry
from .records import Records


class Trace:
    """An append-only list of trace entries shared by the passes of one compile."""

    __slots__ = ("_segments",)

    def __init__(self) -> None:
        self._segments: list[list[TraceEntry] | Callable[[], Iterable[TraceEntry]]] = [[]]

    def add(
        self,
        pass_: Pass,
        outcome: Outcome,
        item_id: str | None = None,
        reason: str | None = None,
        detail: str | None = None,
    ) -> None:
        last = self._segments[-1]
        if callable(last):
            last = []
            self._segments.append(last)
        last.append(
            {
                "id": item_id,
                "pass": pass_.value,
                "outcome": outcome.value,
                "reason": None if reason is None else str(reason),
                "detail": None if detail is None else str(detail),
            }
        )

    def add_segment(self, entries: Callable[[], Iterable[TraceEntry]]) -> None:
        """Entries that are written out only when the trace is read, in this position."""
        self._segments.append(entries)

    def __iter__(self) -> Iterator[TraceEntry]:
        for segment in self._segments:
            yield from (segment() if callable(segment) else segment)

    def records(self) -> Records[TraceEntry]:
        # Snapshot the segments: a refusal may still append to this trace afterwards.
        segments = list(self._segments)
        frozen = [s if callable(s) else list(s) for s in segments]

        def build() -> Iterator[TraceEntry]:
            for segment in frozen:
                yield from (segment() if callable(segment) else segment)

        return Records(build=build)
