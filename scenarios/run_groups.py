"""A run's rows grouped by what its pages add up: the variants by perturbation kind and stored
verdict counts (the verdict summary), every row by its slot states (the coverage).

Compiles that end alike store the same values, so a 10,000-scenario run has a few hundred
groups at most. A finished run's rows no longer change: the last chunk to finish stores its
groups on the run (`SuiteRun.groups`, by `scenarios.runner`), and its pages read them from
there; any other run's are counted from its rows, in one grouped query each.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Min
from django.db.models.fields.json import KT

from .models import SuiteRun

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
    run keeps, if `stored`)."""
    if stored and "states" in (run.groups or {}):
        return run.groups["states"]
    rows = run.results.values_list("slot_states").annotate(rows=Count("pk")).order_by()
    return [[states or {}, count] for states, count in rows]


def run_groups(run: SuiteRun) -> dict[str, Any]:
    """What `SuiteRun.groups` keeps of a run whose rows are all stored."""
    return {
        "verdicts": verdict_groups(run, stored=False),
        "states": state_groups(run, stored=False),
    }
