"""A decision type of its own for the tests of pinned expectations: a harbour master clears a
vessel to berth. Two propositions are required (the hull's certificate, the crew list), one
is optional (the port-state inspection); a shipping agent's message is a weak class nobody
accepts. Built through the services, as an owner would."""

from __future__ import annotations

import datetime as dt
from typing import Any

KEY = "port.berth.clearance"

CLASSES = (
    ("class_certificate", "Classification certificate", 1, False),
    ("crew_manifest", "Crew manifest", 1, False),
    ("port_state_inspection", "Port-state inspection report", 2, False),
    ("agent_message", "Shipping agent's message", 4, True),
)

ENTITY = "IMO-9321483"


def candidate(cid: str, evidence_class: str, supports: list[str], **extra: Any) -> dict[str, Any]:
    return {
        "id": cid,
        "entity": ENTITY,
        "allowed_roles": ["harbour_master"],
        "allowed_purposes": ["berth_allocation"],
        "evidence_class": evidence_class,
        "supports": supports,
        "valid_from": "2026-01-01",
        "tokens": 60,
        "relevance": 0.8,
        "content": f"{evidence_class} {cid}",
        **extra,
    }


# The vessel's file: a certificate and an inspection both speak for the hull (the
# certificate is accepted first), a manifest lists the crew, an agent's message claims it.
POOL = [
    candidate("cert-C1", "class_certificate", ["hull_certified"], relevance=0.7),
    candidate("insp-P7", "port_state_inspection", ["hull_certified", "inspection_clear"]),
    candidate("manifest-M2", "crew_manifest", ["crew_listed"]),
    candidate("agent-A1", "agent_message", ["crew_listed"], relevance=0.99),
]
DIRECTORY = {"entities": {ENTITY: ["MV Aurora"]}, "role_parents": {}}


def make_type(*, owner: Any, catalogue_manager: Any) -> Any:
    from contracts import demo, services

    for key, label, tier, weak in CLASSES:
        services.source_class_create(
            actor=catalogue_manager, key=key, label=label, authority_tier=tier, weak=weak
        )
    contract = demo.DemoContract(
        key=KEY,
        title="Berth clearance",
        description="May the vessel berth today?",
        purposes=("berth_allocation",),
        propositions=(
            demo.DemoProposition(
                "hull_certified",
                ("class_certificate", "port_state_inspection"),
                "The hull is certified seaworthy.",
                max_items=2,
            ),
            demo.DemoProposition("crew_listed", ("crew_manifest",), "The crew is listed."),
            demo.DemoProposition(
                "inspection_clear",
                ("port_state_inspection",),
                "The last port-state inspection found nothing.",
                required=False,
            ),
        ),
        reviewers=(),
        viewers=(),
    )
    return demo.create_contract(contract, owner=owner)


def make_corpus(*, owner: Any, decision_type: Any, name: str = "aurora", pool=None) -> Any:
    from scenarios import services

    return services.corpus_import(
        actor=owner,
        decision_type=decision_type,
        name=name,
        document={"directory": DIRECTORY, "candidates": POOL if pool is None else pool},
    )


def request_fields(**changes: Any) -> dict[str, Any]:
    fields = {
        "principal": "hm-duty",
        "roles": ["harbour_master"],
        "purpose": "berth_allocation",
        "entity": "MV Aurora",
        "decision_date": dt.date(2026, 11, 20),
        "token_budget": 1000,
        "expected_slots": {"hull_certified": "supported"},
    }
    return fields | changes
