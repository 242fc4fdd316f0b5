"""Scenario fixtures: the seed's Atlas corpus imported into the Atlas type, and a scenario."""

from __future__ import annotations

import copy
import datetime as dt
import json
from pathlib import Path

import pytest

ATLAS_INPUT = json.loads((Path(__file__).parents[2] / "examples" / "atlas.json").read_text())


@pytest.fixture
def atlas_document():
    return {
        "directory": copy.deepcopy(ATLAS_INPUT["directory"]),
        "candidates": copy.deepcopy(ATLAS_INPUT["candidates"]),
    }


@pytest.fixture
def corpus(atlas, owner, atlas_document):
    from scenarios import services

    return services.corpus_import(
        actor=owner, decision_type=atlas, name="atlas", document=atlas_document
    )


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
    from scenarios import services

    return services.scenario_create(
        actor=owner,
        decision_type=atlas,
        corpus=corpus,
        name="Maya asks about Atlas",
        **_scenario_fields(),
    )


@pytest.fixture
def finished_run(owner, draft, scenario):
    from scenarios import services

    return services.run_start(actor=owner, version=draft)


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
