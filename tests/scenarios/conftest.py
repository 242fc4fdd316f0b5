"""Scenario fixtures: the seed's Atlas corpus imported into the Atlas type, and a scenario."""

from __future__ import annotations

import copy
import datetime as dt
import json
from pathlib import Path

import pytest
from shared_world import WORLD, add_part

ATLAS_INPUT = json.loads((Path(__file__).parents[2] / "examples" / "atlas.json").read_text())


SCENARIO_NAME = "Maya asks about Atlas"


def _atlas_document():
    return {
        "directory": copy.deepcopy(ATLAS_INPUT["directory"]),
        "candidates": copy.deepcopy(ATLAS_INPUT["candidates"]),
    }


@pytest.fixture
def atlas_document():
    return _atlas_document()


@pytest.fixture
def corpus(atlas, owner, atlas_document):
    from scenarios.models import Corpus

    assert atlas_document == _atlas_document()  # what the recorded part was built from
    WORLD.insert("corpus")
    return Corpus.objects.get(decision_type=atlas, name="atlas")


def _scenario_fields(**changes):
    fields = {
        "principal": "maya",
        "roles": ["credit_analyst"],
        "purpose": "annual_credit_review",
        "entity": "Atlas Industries",
        "decision_date": dt.date(2026, 8, 30),
        "token_budget": 760,
        "expected_slots": {
            "facility_limit": "supported",
            "review_open": "supported",
            "waiver_valid": "unknown",
            "continuation_rule": "supported",
        },
    }
    return fields | changes


@pytest.fixture
def scenario_fields():
    """The Atlas request and its expected slots, with any field changed."""
    return _scenario_fields


@pytest.fixture
def scenario(atlas, owner, corpus):
    from scenarios.models import Scenario

    WORLD.insert("scenario")
    return Scenario.objects.get(decision_type=atlas, name=SCENARIO_NAME)


@pytest.fixture
def finished_run(owner, draft, scenario):
    from scenarios.models import SuiteRun

    WORLD.insert("finished_run")
    return SuiteRun.objects.get(version=draft)


# The parts of the shared world (tests/shared_world.py) the fixtures above take their rows from.


def _owner_and_atlas():
    from django.contrib.auth import get_user_model

    from contracts import demo
    from contracts.models import DecisionType

    owner = get_user_model().objects.get(username=demo.OWNER)
    return owner, DecisionType.objects.get(key=demo.ATLAS.key)


def _make_corpus() -> None:
    from scenarios import services

    owner, atlas = _owner_and_atlas()
    services.corpus_import(
        actor=owner, decision_type=atlas, name="atlas", document=_atlas_document()
    )


def _make_scenario() -> None:
    from scenarios import services
    from scenarios.models import Corpus

    owner, atlas = _owner_and_atlas()
    services.scenario_create(
        actor=owner,
        decision_type=atlas,
        corpus=Corpus.objects.get(decision_type=atlas, name="atlas"),
        name=SCENARIO_NAME,
        **_scenario_fields(),
    )


def _finish_a_run() -> None:
    from contracts import selectors
    from scenarios import services

    owner, atlas = _owner_and_atlas()
    services.run_start(actor=owner, version=selectors.current_version(decision_type=atlas))


def _run_demo_version_2() -> None:
    from contracts.models import ContractVersion
    from scenarios import demo, services

    owner, _ = _owner_and_atlas()
    version = ContractVersion.objects.get(decision_type__key=demo.ATLAS_KEY, number=2)
    services.run_start(actor=owner, version=version)


add_part("corpus", _make_corpus, after=("atlas", "owner"))
add_part("scenario", _make_scenario, after=("atlas", "owner", "corpus"))
add_part("finished_run", _finish_a_run, after=("owner", "atlas", "scenario"))
add_part("demo_run", _run_demo_version_2, after=("demo_versions",))


@pytest.fixture
def demo_run(demo_versions):
    """A real run of the demo's version 2: violations, findings and expected verdicts."""
    from scenarios import demo
    from scenarios.models import SuiteRun

    WORLD.insert("demo_run")
    return SuiteRun.objects.filter(
        version__decision_type__key=demo.ATLAS_KEY, version__number=2
    ).latest("pk")


@pytest.fixture
def groups_as_counted():
    """groups_as_counted(run): whether the groups a finished run kept (added up from its
    chunks' tallies) are the ones its rows give, counted by the database; compared as sets,
    since the database's grouping promises no order."""
    from scenarios.run_groups import run_groups

    def canonical(groups):
        return {key: sorted(json.dumps(g, sort_keys=True) for g in groups[key]) for key in groups}

    def check(run):
        run.refresh_from_db()
        return set(run.groups) == {"verdicts", "states"} and canonical(run.groups) == canonical(
            run_groups(run)
        )

    return check
