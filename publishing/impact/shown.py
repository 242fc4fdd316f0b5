"""The impact report as pages print it: each stored sentence said again from the facts
stored beside it, escaped, every scenario name, candidate id and slot in its own `<bdi>`
(`contracts.wording`), so a name holding bidirectional controls cannot reorder the words
around it.

The stored `text` stays what the report's hash covers; a sentence is said again in HTML only
when its plain form is exactly the stored text (same words, same names). A report stored by
an older release whose words differ is printed as stored, escaped, each sentence isolated
whole."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from contracts.wording import HTML, PLAIN, isolated, said_again

from .scenario_report import problem_text
from .sentences import admitted_text, failure_text, flip_text, scenario_summary
from .verdicts import item_widening_text, verdict_headline


def headline_html(document: Mapping[str, Any]) -> list[str]:
    stored = list(document.get("headline", []))
    verdicts = document.get("verdicts") or {}
    try:
        plain = verdict_headline(verdicts, PLAIN)
    except (KeyError, TypeError, IndexError):
        plain = []
    if plain and stored[: len(plain)] == plain:
        return [
            *verdict_headline(verdicts, HTML),
            *(isolated(line) for line in stored[len(plain) :]),
        ]
    return [isolated(line) for line in stored]


def scenarios_shown(
    entries: Sequence[Mapping[str, Any]], *, compiles: int | None = None
) -> list[dict[str, Any]]:
    """Each scenario entry with `html` on each of its sentences, `summary_html` and
    `problems_html`. Every compile that changes (a scenario's slot changes and admitted-set
    changes, a hundred sentences or more each with a large contract) is said only for the
    entry at index `compiles` (from 1), the one a reader opened; the others keep the facts,
    which the page counts."""
    return [
        _entry_shown(entry, compiles=index == compiles)
        for index, entry in enumerate(entries, start=1)
    ]


def _entry_shown(entry: Mapping[str, Any], *, compiles: bool = True) -> dict[str, Any]:
    name = entry["name"]
    shown = dict(entry)
    shown["compiles_shown"] = compiles
    if compiles:
        shown["flips"] = [
            {**f, "html": said_again(f.get("text"), lambda w, f=f: flip_text(
                name, f["perturbation"], f["proposition"], f["before"], f["after"], w))}
            for f in entry.get("flips", [])
        ]  # fmt: skip
        shown["admitted_changes"] = [
            {**c, "html": said_again(c.get("text"), lambda w, c=c: admitted_text(
                name, c["perturbation"], c["added"], c["removed"], w))}
            for c in entry.get("admitted_changes", [])
        ]  # fmt: skip
    for field, newly in (("newly_failing", True), ("now_passing", False)):
        shown[field] = [
            {**f, "html": said_again(f.get("text"), lambda w, f=f, newly=newly: failure_text(
                name, f, newly=newly, words=w))}
            for f in entry.get(field, [])
        ]  # fmt: skip
    summary = list(entry.get("summary", []))
    try:
        plain = scenario_summary(name, entry, entry.get("compiles", 0))
    except (KeyError, TypeError):
        plain = []
    shown["summary_html"] = (
        scenario_summary(name, entry, entry.get("compiles", 0), HTML)
        if plain == summary
        else [isolated(line) for line in summary]
    )
    prefix = problem_text(name, "")
    shown["problems_html"] = [
        said_again(problem, lambda w, p=str(problem): problem_text(name, p[len(prefix) :], w))
        if str(problem).startswith(prefix)
        else isolated(problem)
        for problem in entry.get("problems", [])
    ]
    return shown


def widenings_shown(widenings: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each widening with `html`: an admitted item's sentence with the item and the scenario
    isolated; a contract widening's text (the compiler's words on the owner's keys) whole."""
    shown = []
    for w in widenings:
        if w.get("source") == "items" and w.get("where"):
            html = said_again(w.get("text"), lambda words, w=w: item_widening_text(
                w["id"], w["where"], words, w.get("where_count")))  # fmt: skip
        else:
            html = isolated(w.get("text", ""))
        shown.append({**w, "html": html})
    return shown


# What a page lists of what grows with the suite: a cause's occurrences, the new findings.
OCCURRENCES_SHOWN = 50
FINDINGS_SHOWN = 50


def page_head(head: Mapping[str, Any]) -> dict[str, Any]:
    """The report's head as the pages read it, its size bounded whatever the suite: each
    cause of violations with its first `OCCURRENCES_SHOWN` occurrences (its `count` and
    `scenarios` whole), the first `FINDINGS_SHOWN` findings (`findings_total` counts them
    all), each widening's first place only (`where_count` counts them). Every sentence
    stays as stored and can be said again from what is kept."""
    verdicts = head["verdicts"]
    shown_verdicts = {
        **verdicts,
        "violations": [
            {**row, "occurrences": row["occurrences"][:OCCURRENCES_SHOWN]}
            for row in verdicts["violations"]
        ],
        "findings": verdicts["findings"][:FINDINGS_SHOWN],
        "findings_total": len(verdicts["findings"]),
        "widenings": [
            {**w, "where": w["where"][:1], "where_count": len(w["where"])} if w.get("where") else w
            for w in verdicts["widenings"]
        ],
    }
    return {**head, "verdicts": shown_verdicts}


__all__ = ["headline_html", "page_head", "scenarios_shown", "widenings_shown"]
