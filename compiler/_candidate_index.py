"""A by-id view of candidates kept in id order, answering look-ups by binary search.

Only `superseded_by`, dependencies and groups look candidates up by id, usually a handful of
times per compile; building a dictionary of the whole pool for them would cost more than
admitting it.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Mapping, Sequence
from operator import attrgetter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from compiler._slotted import AnyCandidate as Candidate

_ID = attrgetter("id")


class CandidateIndex(Mapping[str, "Candidate"]):
    __slots__ = ("candidates",)

    def __init__(self, candidates: Sequence[Candidate]) -> None:
        """`candidates` must be in id order with unique ids (as validation delivers them)."""
        self.candidates = candidates

    def __getitem__(self, key: str) -> Candidate:
        at = bisect_left(self.candidates, key, key=_ID)
        if at < len(self.candidates) and self.candidates[at].id == key:
            return self.candidates[at]
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return (c.id for c in self.candidates)

    def __len__(self) -> int:
        return len(self.candidates)
