"""The compile trace: one entry per decision, ids and reason codes only, never content.

Request-level passes add entries one at a time. The admission pass decides for every candidate
and hands the trace a *segment* that produces its entries only when the trace is read. Entries
are kept as rows, `(id, pass, outcome, reason, detail)` of plain strings (not enum members):
the CLI writes them straight out (`_output_json`), and `_records` makes the output's dicts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from compiler._codes import Outcome, Pass
from compiler._records import Records, TraceEntry

TraceRow = tuple[str | None, str, str, str | None, str | None]
"""A trace entry as (id, pass, outcome, reason, detail)."""

TRACE_KEYS = ("id", "pass", "outcome", "reason", "detail")


class Trace:
    """An append-only list of trace entries shared by the passes of one compile."""

    __slots__ = ("_segments",)

    def __init__(self) -> None:
        self._segments: list[list[TraceRow] | Callable[[], Iterable[TraceRow]]] = [[]]

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
            (
                item_id,
                pass_.value,
                outcome.value,
                None if reason is None else str(reason),
                None if detail is None else str(detail),
            )
        )

    def add_segment(self, rows: Callable[[], Iterable[TraceRow]]) -> None:
        """Rows that are produced only when the trace is read, in this position."""
        self._segments.append(rows)

    def snapshot(self) -> Callable[[], Iterator[TraceRow]]:
        """The rows so far, to read later (a refusal may still append to this trace)."""
        frozen = [s if callable(s) else list(s) for s in self._segments]

        def rows() -> Iterator[TraceRow]:
            for segment in frozen:
                yield from (segment() if callable(segment) else segment)

        return rows

    def __iter__(self) -> Iterator[TraceEntry]:
        for row in self.snapshot()():
            yield entry(row)

    def records(self) -> Records[TraceEntry]:
        rows = self.snapshot()
        return Records(build=lambda: map(entry, rows()))


def entry(row: TraceRow) -> TraceEntry:
    return {"id": row[0], "pass": row[1], "outcome": row[2], "reason": row[3], "detail": row[4]}
