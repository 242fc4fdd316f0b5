"""A small domain of our own for the Suite strength tests (neither credit review nor refunds):
a building-control office deciding whether a flat may be occupied.

`permit_valid` accepts two classes of the same authority tier, the city's permit register
before the county's, one item at most; the one scenario's pool holds a permit of each, and
the scenario pins only slot states. Reversing that precedence changes which permit the
packet holds and no slot: the standard suite has nothing to notice, and pinning the admitted
set catches it.
"""

from __future__ import annotations

import datetime as dt

from contracts import demo, roles, services
from contracts.models import SourceClass

Tier = SourceClass.AuthorityTier

KEY = "buildings.occupancy"
SCENARIO = "Dana checks flat 12"
CORPUS = "flat 12 file"

SOURCE_CLASSES = (
    ("city_permit", "City permit register", Tier.SYSTEM_OF_RECORD, False),
    ("county_permit", "County permit register", Tier.SYSTEM_OF_RECORD, False),
    ("inspection_report", "Inspection report", Tier.APPROVED_INSTRUMENT, False),
    ("site_memo", "Site memo", Tier.INFORMAL, True),
)

CONTRACT = demo.DemoContract(
    key=KEY,
    title="Building control: occupancy sign-off",
    description="May flat 12 be occupied?",
    purposes=("occupancy_check",),
    propositions=(
        demo.DemoProposition(
            "permit_valid", ("city_permit", "county_permit"), "A building permit is in force."
        ),
        demo.DemoProposition(
            "inspection_passed", ("inspection_report",), "The final inspection passed."
        ),
    ),
)


def _candidate(item_id: str, evidence_class: str, supports: str, **extra):
    return {
        "id": item_id,
        "entity": "FLAT-12",
        "allowed_roles": ["building_officer"],
        "allowed_purposes": ["occupancy_check"],
        "evidence_class": evidence_class,
        "supports": [supports],
        "valid_from": "2026-01-01",
        "tokens": 60,
        "relevance": 0.7,
        "content": f"{evidence_class} {item_id}",
    } | extra


POOL = {
    "directory": {"entities": {"FLAT-12": ["Flat 12", "12 Mill Lane"]}},
    "candidates": [
        _candidate("PERMIT-CITY-7", "city_permit", "permit_valid"),
        _candidate("PERMIT-COUNTY-3", "county_permit", "permit_valid", relevance=0.9),
        _candidate("INSPECTION-22", "inspection_report", "inspection_passed"),
        _candidate("MEMO-5", "site_memo", "inspection_passed", relevance=0.4),
    ],
}

REQUEST = {
    "principal": "dana",
    "roles": ["building_officer"],
    "purpose": "occupancy_check",
    "entity": "Flat 12",
    "decision_date": dt.date(2026, 9, 1),
    "token_budget": 600,
}


def create(*, owner, catalogue_manager, viewers=(), reviewers=()):
    """The catalogue's classes, the decision type with its draft, the corpus and the one
    scenario (expecting both slots supported, pinning nothing else)."""
    from scenarios import services as scenario_services

    existing = set(SourceClass.objects.values_list("key", flat=True))
    for key, label, tier, weak in SOURCE_CLASSES:
        if key not in existing:
            services.source_class_create(
                actor=catalogue_manager, key=key, label=label, authority_tier=tier, weak=weak
            )
    decision_type = demo.create_contract(
        CONTRACT, owner=owner, viewers=viewers, reviewers=reviewers
    )
    corpus = scenario_services.corpus_import(
        actor=owner, decision_type=decision_type, name=CORPUS, document=POOL
    )
    scenario = scenario_services.scenario_create(
        actor=owner,
        decision_type=decision_type,
        corpus=corpus,
        name=SCENARIO,
        expected_slots={"permit_valid": "supported", "inspection_passed": "supported"},
        **REQUEST,
    )
    return decision_type, scenario


def grant(owner, decision_type, person, role=roles.Role.VIEWER):
    services.access_grant(actor=owner, decision_type=decision_type, user=person, role=role)
