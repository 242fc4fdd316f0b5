"""Suite strength with the real mutation engine (`compiler.mutation`), on the building-control
domain of `strength_domain`: the standard suite misses the precedence of two permit registers
of the same tier, the engine proposes a scenario that pins the permit kept, and once an owner
adds it the mistake is caught."""

from __future__ import annotations

import pytest

from scenarios import services
from scenarios.models import Corpus, MutationRun
from tests.scenarios import strength_domain as domain

pytestmark = pytest.mark.django_db

PRECEDENCE = "precedence_reversed:permit_valid"
LOWER_TIER = "lower_tier_class_added:permit_valid"


@pytest.fixture
def version(owner, catalogue_manager):
    decision_type, _ = domain.create(owner=owner, catalogue_manager=catalogue_manager)
    return decision_type.versions.get()


def mutant(run: MutationRun, key: str) -> dict:
    return next(m for m in run.mutants if m["key"] == key)


def test_added_proposals_kill_the_mutants_they_were_made_for(owner, version):
    first = services.mutation_run_start(actor=owner, version=version)
    assert first.status == MutationRun.Status.FINISHED, first.error
    reversed_precedence = mutant(first, PRECEDENCE)
    assert reversed_precedence["status"] == "surviving"
    assert reversed_precedence["proposal"]["pool_from"] == domain.SCENARIO
    lower_tier = mutant(first, LOWER_TIER)
    assert lower_tier["status"] == "surviving"
    assert lower_tier["proposal"]["pool_from"] is None  # a pool of its own
    corpora = Corpus.objects.count()

    over_same_pool, unpinned = services.proposal_add(actor=owner, run=first, mutant_key=PRECEDENCE)
    assert unpinned == []
    assert over_same_pool.corpus.name == domain.CORPUS
    assert over_same_pool.expected_resource_ids == {"permit_valid": ["PERMIT-CITY-7"]}
    over_own_pool, _ = services.proposal_add(actor=owner, run=first, mutant_key=LOWER_TIER)
    assert over_own_pool.corpus.name.startswith("Suite strength: ")
    assert Corpus.objects.count() == corpora + 1

    second = services.mutation_run_start(actor=owner, version=version)

    assert second.status == MutationRun.Status.FINISHED, second.error
    for key in (PRECEDENCE, LOWER_TIER):
        assert mutant(second, key)["status"] == "killed", key
        assert mutant(second, key)["killed_by"] == "expectations", key
    assert second.report["score"] > first.report["score"]
