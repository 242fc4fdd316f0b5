"""The objects a person may see, found through the decision type: lookups (the model's
`DoesNotExist` for one that is not there or not of that type, which a page answers with 404),
lists with their counts, and the corpus export."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce

from contracts import selectors as contract_selectors
from contracts.models import ContractVersion, DecisionType
from contracts.selectors import User
from scenarios import compiling
from scenarios.models import Corpus, CorpusCandidate, Scenario, ScenarioResult, SuiteRun


def decision_type_for_user(*, user: User, key: str) -> DecisionType:
    return contract_selectors.decision_type_for_user(user=user, key=key)


def decision_types_with_counts(*, user: User) -> QuerySet[DecisionType]:
    return (
        contract_selectors.decision_types_for_user(user=user)
        .annotate(
            scenario_count=Coalesce(_live_count(Scenario, "decision_type"), 0),
            corpus_count=Coalesce(_live_count(Corpus, "decision_type"), 0),
        )
        .order_by("key")
    )


def _live_count(model: Any, to: str) -> Subquery:
    """How many live rows of `model` point (through `to`) at the outer row: a subquery each,
    so two counts do not multiply one's rows by the other's as two joins would."""
    rows = model.objects.live().filter(**{to: OuterRef("pk")}).order_by()
    return Subquery(rows.values(to).annotate(n=Count("*")).values("n"))


def _corpora_listed(queryset: QuerySet[Corpus]) -> QuerySet[Corpus]:
    return (
        queryset.order_by("name", "id")
        .select_related("archived_by")
        .only("pk", "name", "archived_at", "archived_by__username")
        .annotate(
            size=Coalesce(_live_count(CorpusCandidate, "corpus"), 0),
            used_by=Coalesce(_live_count(Scenario, "corpus"), 0),
        )
    )


def corpora(*, decision_type: DecisionType) -> QuerySet[Corpus]:
    """The type's live corpora with their sizes (`size`, live candidates) and how many live
    scenarios use them."""
    return _corpora_listed(decision_type.corpora.live())


def archived_corpora(*, decision_type: DecisionType) -> QuerySet[Corpus]:
    return _corpora_listed(decision_type.corpora.archived())


def corpus_for_user(*, user: User, key: str, pk: int) -> Corpus:
    decision_type = decision_type_for_user(user=user, key=key)
    try:
        return decision_type.corpora.select_related("decision_type").get(pk=pk)
    except Corpus.DoesNotExist:
        raise Corpus.DoesNotExist("No such corpus.") from None


def scenarios(*, decision_type: DecisionType) -> QuerySet[Scenario]:
    """The live scenarios, in suite order (what a suite run compiles)."""
    return (
        decision_type.scenarios.live().select_related("corpus").order_by("position", "name", "id")
    )


def archived_scenarios(*, decision_type: DecisionType) -> QuerySet[Scenario]:
    return (
        decision_type.scenarios.archived()
        .select_related("corpus", "archived_by")
        .order_by("position", "name", "id")
    )


def scenario_for_user(*, user: User, key: str, pk: int) -> Scenario:
    decision_type = decision_type_for_user(user=user, key=key)
    try:
        return decision_type.scenarios.select_related("decision_type", "corpus").get(pk=pk)
    except Scenario.DoesNotExist:
        raise Scenario.DoesNotExist("No such scenario.") from None


def runs(*, decision_type: DecisionType, limit: int = 20) -> QuerySet[SuiteRun]:
    return decision_type.suite_runs.select_related("version", "scenario", "created_by")[:limit]


def run_for_user(*, user: User, key: str, pk: int) -> SuiteRun:
    decision_type = decision_type_for_user(user=user, key=key)
    try:
        return decision_type.suite_runs.select_related(
            "decision_type", "version__decision_type", "scenario", "created_by"
        ).get(pk=pk)
    except SuiteRun.DoesNotExist:
        raise SuiteRun.DoesNotExist("No such run.") from None


def result_for_user(*, user: User, key: str, run_pk: int, pk: int) -> ScenarioResult:
    run = run_for_user(user=user, key=key, pk=run_pk)
    try:
        result = run.results.get(pk=pk)
    except ScenarioResult.DoesNotExist:
        raise ScenarioResult.DoesNotExist("No such result.") from None
    result.run = run
    return result


def version_for(*, decision_type: DecisionType, number: int | None) -> ContractVersion:
    """The numbered version, or the one the editor shows (the open draft, else the latest)."""
    if number is None:
        version = contract_selectors.current_version(decision_type=decision_type)
    else:
        version = decision_type.versions.filter(number=number).first()
    if version is None:
        raise ContractVersion.DoesNotExist("No such version.")
    version.decision_type = decision_type
    return version


def published_version(*, decision_type: DecisionType) -> ContractVersion | None:
    return decision_type.versions.filter(status=ContractVersion.Status.PUBLISHED).first()


def corpus_export(*, corpus: Corpus) -> dict[str, Any]:
    return compiling.corpus_document(
        corpus.directory,
        corpus.candidates.live().order_by("position", "id").values_list("data", flat=True),
    )
