"""A run's rows grouped by what its pages add up: the variants by perturbation kind and stored
verdict counts (the verdict summary), every row by its slot states (the coverage).

Compiles that end alike store the same values, so a 10,000-scenario run has a few hundred
groups at most. A finished run's rows no longer change: the last chunk to finish stores its
groups on the run (`SuiteRun.groups`, by `scenarios.runner`), and its pages read them from
there; any other run's are counted from its rows, in one grouped query each.

A chunk counts its own rows as it writes them (`GroupTally`, fed by the result writer with
the JSON texts it stores) and commits the count with them (`SuiteRunChunk.groups`), so the
last chunk adds up the chunks' counts instead of reading the whole run back. A chunk that
began before chunks kept counts has none, and the run's groups are then counted from its
rows as before.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from django.db.models import Count, Min, Q
from django.db.models.fields.json import KT

from compiler.perturb import PROBE_OPERATORS

from .models import SuiteRun
from .result_rows import json_text

# [operator, verdict counts or None, variants, first position]
VerdictGroup = list[Any]
# [slot states, rows]
StateGroup = list[Any]


def verdict_groups(run: SuiteRun, *, stored: bool = True) -> list[VerdictGroup]:
    """The run's variants grouped by operator and stored `verdict_counts`, with how many
    there are in each and the position of the first (those the run keeps, if `stored`)."""
    if stored and "verdicts" in (run.groups or {}):
        return run.groups["verdicts"]
    rows = (
        run.results.exclude(perturbation="")
        .values_list(KT("perturbation_args__operator"), "verdict_counts")
        .annotate(variants=Count("pk"), first=Min("position"))
        .order_by()
    )
    return [[operator or "", counts, variants, first] for operator, counts, variants, first in rows]


def state_groups(run: SuiteRun, *, stored: bool = True) -> list[StateGroup]:
    """The run's rows grouped by their stored slot states, with how many in each (those the
    run keeps, if `stored`), but the contract probes' (`PROBE_OPERATORS`): their items are made
    up to question the contract, not what the scenarios exercise."""
    if stored and "states" in (run.groups or {}):
        return run.groups["states"]
    probes = Q()
    for operator in sorted(PROBE_OPERATORS):
        probes |= Q(perturbation=operator) | Q(perturbation__startswith=f"{operator}(")
    rows = (
        run.results.exclude(probes).values_list("slot_states").annotate(rows=Count("pk")).order_by()
    )
    return [[states or {}, count] for states, count in rows]


def run_groups(run: SuiteRun) -> dict[str, Any]:
    """What `SuiteRun.groups` keeps of a run whose rows are all stored."""
    return {
        "verdicts": verdict_groups(run, stored=False),
        "states": state_groups(run, stored=False),
    }


class GroupTally:
    """A chunk's rows grouped as `run_groups` groups a run's, counted as they are written.

    Rows are told apart by the JSON text their columns store (the result writer's, which
    writes a value the same way every time), as SQLite's GROUP BY tells them apart; a run's
    slot states keep the contract's proposition order and its verdict counts sorted keys, so
    PostgreSQL's grouping of the same values by equality makes the same groups."""

    def __init__(self) -> None:
        # (operator, verdict counts' text or None) -> [variants, first position]
        self.verdicts: dict[tuple[str, str | None], list[int]] = {}
        self.states: dict[str, int] = {}  # slot states' text -> rows

    def count(self, operator: str | None, counts: str | None, states: str, position: int) -> None:
        """One row: a variant's `operator` (None on a base, which only its states count). A
        contract probe's states are not counted: coverage is what the scenarios exercise."""
        if operator not in PROBE_OPERATORS:
            self.states[states] = self.states.get(states, 0) + 1
        if operator is None:
            return
        group = self.verdicts.get((operator, counts))
        if group is None:
            self.verdicts[(operator, counts)] = [1, position]
        else:
            group[0] += 1
            group[1] = min(group[1], position)

    def to_json(self) -> dict[str, Any]:
        """What `SuiteRunChunk.groups` keeps: `run_groups`' shape, values decoded, the
        verdict groups in the order of their first rows and the states in their texts' (the
        database's grouping promises no order, and the pages want none)."""
        verdicts = sorted(self.verdicts.items(), key=lambda item: item[1][1])
        return {
            "verdicts": [
                [operator, json.loads(counts) if counts is not None else None, n, first]
                for (operator, counts), (n, first) in verdicts
            ],
            "states": [[json.loads(states), self.states[states]] for states in sorted(self.states)],
        }

    @classmethod
    def from_json(cls, stored: Mapping[str, Any]) -> GroupTally:
        """The tally a chunk committed (`to_json`), to go on counting after a requeue."""
        tally = cls()
        tally.add(stored)
        return tally

    def add(self, stored: Mapping[str, Any]) -> None:
        """Add another tally's `to_json` to this one."""
        for operator, counts, n, first in stored["verdicts"]:
            key = (operator, json_text(counts) if counts is not None else None)
            group = self.verdicts.setdefault(key, [0, first])
            group[0] += n
            group[1] = min(group[1], first)
        for states, n in stored["states"]:
            text = json_text(states)
            self.states[text] = self.states.get(text, 0) + n


def merged_groups(chunks: Iterable[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The run's groups (`run_groups`) added up from its chunks' committed tallies; None if a
    chunk kept none (it began before chunks did), when they must be counted from the rows."""
    total = GroupTally()
    for stored in chunks:
        if "verdicts" not in stored:
            return None
        total.add(stored)
    return total.to_json()
