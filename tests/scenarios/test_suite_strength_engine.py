"""Suite strength with the real mutation engine (`compiler._mutation`), on the building-control
domain of `strength_domain`: the standard suite misses the precedence of two permit registers
of the same tier, the engine proposes a scenario over the same corpus that pins the permit
kept, and once an owner adds it the mistake is caught."""

from __future__ import annotations

import pytest

from scenarios import services
from scenarios.models import Corpus, MutationRun
from tests.scenarios import strength_domain as domain

pytestmark = pytest.mark.django_db

PRECEDENCE = "precedence_reversed:permit_valid"


@pytest.fixture
def version(owner, catalogue_manager):
    decision_type, _ = domain.create(owner=owner, catalogue_manager=catalogue_manager)
    return decision_type.versions.get()


def mutant(run: MutationRun, key: str) -> dict:
    return next(m for m in run.mutants if m["key"] == key)


def test_the_added_proposal_kills_the_mutant_it_was_made_for(owner, version):
    first = services.mutation_run_start(actor=owner, version=version)
    assert first.status == MutationRun.Status.FINISHED, first.error
    survivor = mutant(first, PRECEDENCE)
    assert survivor["status"] == "surviving"
    assert survivor["proposal"]["pool_from"] == domain.SCENARIO
    corpora = Corpus.objects.count()

    added, unpinned = services.proposal_add(actor=owner, run=first, mutant_key=PRECEDENCE)

    assert unpinned == []
    assert added.corpus.name == domain.CORPUS and Corpus.objects.count() == corpora
    assert added.expected_resource_ids == {"permit_valid": ["PERMIT-CITY-7"]}

    second = services.mutation_run_start(actor=owner, version=version)

    assert second.status == MutationRun.Status.FINISHED, second.error
    assert mutant(second, PRECEDENCE)["status"] == "killed"
    assert mutant(second, PRECEDENCE)["killed_by"] == "expectations"
    assert second.report["score"] > first.report["score"]
