"""A stored report's scenarios, one row each (`ImpactScenarioEntry`): written by the slices
that compute them, read back whole only to hash or approve the report, and a page at a time
by the pages, filtered in the database by proposition and by what changed."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from contracts.models import ImpactScenarioEntry, StoredImpactReport

# Scenarios a page of the report shows.
ENTRIES_PER_PAGE = 10
# The kinds of change a reader filters the scenarios by: each the column that counts it.
CHANGE_KINDS = {
    "flips": "slot changes",
    "newly_failing": "newly failing expectations",
    "now_passing": "expectations now passing",
    "admitted_changes": "admitted-set changes",
    "problems": "scenarios that cannot be compiled",
}
# Failures about one proposition (its state, `required` or resource ids), as
# `verdicts.per_proposition` counts them.
PROPOSITION_FAILURES = ("slot", "required", "resource_ids")


# What a page's list reads of an entry (`listed`): its sentences and failures, and of each
# compile's change the facts the summary groups (`sentences.scenario_summary`), without the
# change's own sentence (said only when the scenario's every compile is opened) or the
# scenario's verdicts (the report's head counts them).
LISTED = ("name", "changed", "summary", "compiles", "problems", "newly_failing", "now_passing")
LISTED_FACTS = {
    "flips": ("perturbation", "proposition", "before", "after"),
    "admitted_changes": ("perturbation", "added", "removed"),
}


def listed(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The entry as a page's list of scenarios reads it (`LISTED`, `LISTED_FACTS`)."""
    shown = {key: entry[key] for key in LISTED if key in entry}
    for key, facts in LISTED_FACTS.items():
        shown[key] = [
            {fact: change[fact] for fact in facts if fact in change}
            for change in entry.get(key, [])
        ]
    return shown


def entry_row(report_id: int, position: int, entry: Mapping[str, Any]) -> ImpactScenarioEntry:
    """The row of one scenario's entry: the entry, and the counts the pages filter by."""
    keys = {flip["proposition"] for flip in entry.get("flips", [])}
    keys |= {
        failure["key"]
        for failure in entry.get("newly_failing", [])
        if failure.get("what") in PROPOSITION_FAILURES
    }
    return ImpactScenarioEntry(
        report_id=report_id,
        position=position,
        name=entry["name"],
        changed=bool(entry.get("changed")),
        **{kind: len(entry.get(kind, [])) for kind in CHANGE_KINDS},
        propositions="|" + "|".join(sorted(keys)) + "|" if keys else "",
        entry=dict(entry),
        listed=listed(entry),
    )


def entries_store(report_id: int, first: int, entries: Iterable[Mapping[str, Any]]) -> int:
    """Store entries from position `first` on; how many."""
    rows = [entry_row(report_id, first + n, entry) for n, entry in enumerate(entries)]
    ImpactScenarioEntry.objects.bulk_create(rows, batch_size=500)
    return len(rows)


def report_entries(report: StoredImpactReport) -> list[dict[str, Any]]:
    """Every entry of the report, in order (to hash or approve it; never for a page)."""
    rows = report.entries.order_by("position").values_list("entry", flat=True)
    return list(rows.iterator(chunk_size=1000))


@dataclass(frozen=True)
class EntriesPage:
    entries: list[dict[str, Any]]
    number: int
    count: int  # scenarios the filter keeps
    has_next: bool

    @property
    def first(self) -> int:
        return (self.number - 1) * ENTRIES_PER_PAGE + 1 if self.entries else 0

    @property
    def last(self) -> int:
        return self.first + len(self.entries) - 1 if self.entries else 0


def entries_page(
    report_id: int,
    *,
    number: int = 1,
    proposition: str = "",
    kind: str = "",
    changed_only: bool = False,
    total: int | None = None,
    whole: int | None = None,
) -> EntriesPage:
    """One page of the report's scenarios (two queries, one given `total`, the report's
    number of scenarios, and no filter): those about `proposition` (a slot change or a newly
    failing expectation), with a change of `kind` (`CHANGE_KINDS`), or only those that
    change; unknown filters keep everything. Each entry as the list reads it (`listed`),
    but the one at index `whole` (from 1, the scenario whose every compile is shown) and
    those stored before `listed` was, read whole in one more query."""
    rows = ImpactScenarioEntry.objects.filter(report_id=report_id)
    if proposition:
        rows = rows.filter(propositions__contains=f"|{proposition}|")
    if kind in CHANGE_KINDS:
        rows = rows.filter(**{f"{kind}__gt": 0})
    if changed_only:
        rows = rows.filter(changed=True)
    filtered = bool(proposition) or kind in CHANGE_KINDS or changed_only
    count = rows.count() if filtered or total is None else total
    number = max(1, number)
    start = (number - 1) * ENTRIES_PER_PAGE
    picked = list(
        rows.order_by("position").values_list("position", "listed")[
            start : start + ENTRIES_PER_PAGE
        ]
    )
    read_whole = [
        position
        for index, (position, entry) in enumerate(picked, start=1)
        if entry is None or index == whole
    ]
    wholes: dict[int, dict[str, Any]] = {}
    if read_whole:
        found = ImpactScenarioEntry.objects.filter(report_id=report_id, position__in=read_whole)
        wholes = dict(found.values_list("position", "entry"))
    shown: list[dict[str, Any]] = []
    for position, entry in picked:
        read = wholes.get(position, entry)
        assert read is not None  # a row without `listed` is read whole
        shown.append(read)
    return EntriesPage(
        entries=shown, number=number, count=count, has_next=start + len(shown) < count
    )
