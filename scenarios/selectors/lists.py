"""The rows the list pages show, with the filters people use evaluated in the database.

Each query loads only the fields its list shows (a scenario row does not bring its request,
pins and variants; a run row does not bring its catalogue and groups), so a page of rows
costs the same whatever the suite's size, and a page asks for one page of them.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass
from functools import reduce
from typing import Any

from django.db.models import Count, F, IntegerField, OuterRef, Q, QuerySet, Subquery
from django.db.models.fields.json import KeyTextTransform, KeyTransform
from django.db.models.functions import Cast, Coalesce

from contracts import selectors as contract_selectors
from contracts.models import DecisionType
from scenarios.models import Corpus, CorpusCandidate, Scenario, SuiteRun


@dataclass(frozen=True)
class ScenarioFilter:
    """What the scenarios list is narrowed to; an empty field narrows nothing.

    `text` is looked for in the name and description (case-insensitive); `proposition` keeps
    the scenarios that expect something of it; `verdict` (a slot state) those that expect it
    of `proposition`, or of any proposition when none is named."""

    text: str = ""
    corpus: int | None = None
    proposition: str = ""
    verdict: str = ""

    @property
    def active(self) -> bool:
        return bool(self.text or self.corpus or self.proposition or self.verdict)


def _expects(proposition: str, verdict: str, alias: str) -> tuple[dict, Q]:
    """An alias reading the state a scenario expects of `proposition`, and the test on it."""
    # A JSON value compared with a JSON value: the lookup encodes `verdict` for the database.
    return {alias: KeyTransform(proposition, "expected_slots")}, Q(**{alias: verdict})


def scenario_rows(
    *, decision_type: DecisionType, filters: ScenarioFilter, propositions: Sequence[str] = ()
) -> QuerySet[Scenario]:
    """The live scenarios the list shows, in suite order, narrowed by `filters`.

    `propositions` are those a `verdict` without a proposition is looked for in (the
    contract's): a JSON object's values cannot be searched the same way on every database,
    its keys can."""
    rows = (
        decision_type.scenarios.live()
        .select_related("corpus")
        .only("pk", "name", "principal", "decision_date", "expected_slots", "corpus__name")
        .order_by("position", "name", "id")
    )
    if filters.text:
        rows = rows.filter(Q(name__icontains=filters.text) | Q(description__icontains=filters.text))
    if filters.corpus:
        rows = rows.filter(corpus_id=filters.corpus)
    if filters.proposition and filters.verdict:
        alias, test = _expects(filters.proposition, filters.verdict, "expects_0")
        rows = rows.alias(**alias).filter(test)
    elif filters.proposition:
        rows = rows.filter(expected_slots__has_key=filters.proposition)
    elif filters.verdict:
        aliases: dict = {}
        tests = []
        for index, proposition in enumerate(propositions):
            alias, test = _expects(proposition, filters.verdict, f"expects_{index}")
            aliases |= alias
            tests.append(test)
        rows = rows.alias(**aliases).filter(reduce(operator.or_, tests)) if tests else rows.none()
    return rows


def has_scenarios(*, decision_type: DecisionType) -> bool:
    """Whether the type has a live scenario (a run has something to compile)."""
    return decision_type.scenarios.live().exists()


def archived_scenario_rows(*, decision_type: DecisionType) -> QuerySet[Scenario]:
    return (
        decision_type.scenarios.archived()
        .select_related("archived_by")
        .only("pk", "name", "archived_at", "archived_by__username")
        .order_by("position", "name", "id")
    )


def run_rows(*, decision_type: DecisionType) -> QuerySet[SuiteRun]:
    """The type's runs, newest first, with the two figures of their summary the list shows
    read by the database (`failures`, `flipped_slots`; None before a run has a summary)."""
    return (
        decision_type.suite_runs.select_related("version", "scenario", "created_by")
        .only(
            "pk",
            "status",
            "total",
            "done",
            "created_at",
            "version__number",
            "scenario__name",
            "created_by__username",
        )  # fmt: skip
        .annotate(
            failures=Cast(KeyTextTransform("failures", "summary"), IntegerField()),
            flipped_slots=Cast(KeyTextTransform("flipped_slots", "summary"), IntegerField()),
        )
        .order_by("-created_at", "-id")
    )


def candidate_rows(*, corpus_id: int, text: str = "", evidence_class: str = "") -> QuerySet:
    """A corpus's live candidates in corpus order; `text` narrows to the ids that contain it,
    `evidence_class` to the candidates of that class."""
    rows = CorpusCandidate.objects.live().filter(corpus_id=corpus_id).order_by("position", "id")
    if text:
        rows = rows.filter(candidate_id__icontains=text)
    if evidence_class:
        rows = rows.alias(evidence_class=KeyTransform("evidence_class", "data")).filter(
            evidence_class=evidence_class
        )
    return rows.only("pk", "candidate_id", "data")


def archived_candidate_rows(*, corpus_id: int) -> QuerySet:
    return (
        CorpusCandidate.objects.archived()
        .filter(corpus_id=corpus_id)
        .only("pk", "candidate_id", "archived_at")
        .order_by("position", "id")
    )


def proposition_keys(*, decision_type: DecisionType) -> list[str]:
    """The propositions of the version the editor shows, in its order: what the scenarios
    list filters by (the version's document is not read)."""
    version = contract_selectors.current_version(decision_type=decision_type)
    if version is None:
        return []
    return list(version.propositions.values_list("key", flat=True))


def corpus_choices(*, decision_type: DecisionType) -> list[tuple[int, str]]:
    """The type's corpora as (pk, name), archived ones named so, for the scenarios list's
    corpus filter (a live scenario may still use an archived corpus)."""
    rows = decision_type.corpora.order_by(
        F("archived_at").asc(nulls_first=True), "name"
    ).values_list("pk", "name", "archived_at")
    return [(pk, f"{name} (archived)" if archived else name) for pk, name, archived in rows]


@dataclass(frozen=True)
class SuiteCounts:
    """How many live and archived scenarios and corpora a type has: the suite page's four
    list lengths, read in one query."""

    scenarios: int
    archived_scenarios: int
    corpora: int
    archived_corpora: int


def suite_counts(*, decision_type: DecisionType) -> SuiteCounts:
    def counted(rows: Any, archived: bool) -> Coalesce:
        rows = rows.filter(decision_type=OuterRef("pk"), archived_at__isnull=not archived)
        number = rows.order_by().values("decision_type").annotate(n=Count("*")).values("n")
        return Coalesce(Subquery(number), 0)

    counts = (
        DecisionType.objects.filter(pk=decision_type.pk)
        .values_list(
            counted(Scenario.objects, False),
            counted(Scenario.objects, True),
            counted(Corpus.objects, False),
            counted(Corpus.objects, True),
        )
        .get()
    )
    return SuiteCounts(*counts)
