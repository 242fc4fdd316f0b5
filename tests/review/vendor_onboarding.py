"""A decision type of its own for the review tests: vendor onboarding, a supplier's due
diligence before its first purchase order. Two scenarios (two suppliers) over one corpus in
which a web page claims each supplier is clear of sanctions: a contract that accepts web
pages for `sanctions_clear` breaks the weak-promotion relation in both, for one cause."""

from __future__ import annotations

import datetime as dt
from typing import Any

from contracts import demo as contracts_demo
from contracts import services
from contracts.models import SourceClass

KEY = "vendor.onboarding"
Tier = SourceClass.AuthorityTier
CLASSES = (
    ("tax_authority_record", "Tax authority record", Tier.SYSTEM_OF_RECORD, False),
    ("insurer_certificate", "Insurer certificate", Tier.APPROVED_INSTRUMENT, False),
    ("screening_result", "Sanctions screening result", Tier.SYSTEM_OF_RECORD, False),
    ("web_page", "Web page", Tier.INFORMAL, True),
)
CONTRACT = contracts_demo.DemoContract(
    key=KEY,
    title="Vendor onboarding: first purchase order",
    description="May this supplier receive its first purchase order?",
    purposes=("vendor_onboarding",),
    propositions=(
        contracts_demo.DemoProposition(
            "tax_registration_valid", ("tax_authority_record",), "The supplier is registered."
        ),
        contracts_demo.DemoProposition(
            "insurance_in_force", ("insurer_certificate",), "Liability cover is in force."
        ),
        contracts_demo.DemoProposition(
            "sanctions_clear", ("screening_result",), "The supplier is not sanctioned."
        ),
    ),
    reviewers=(),
    viewers=(),
)
SUPPLIERS = {"V-KESTREL": "Kestrel Supplies", "V-LARKSPUR": "Larkspur Metals"}


def _item(id_: str, entity: str, cls: str, supports: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": id_,
        "entity": entity,
        "allowed_roles": ["procurement_officer"],
        "allowed_purposes": ["vendor_onboarding"],
        "evidence_class": cls,
        "supports": [supports],
        "valid_from": "2026-01-01",
        "tokens": 60,
        "relevance": 0.8,
        "content": f"{cls.replace('_', ' ')} about {SUPPLIERS[entity]}",
        **extra,
    }


def corpus_document() -> dict[str, Any]:
    candidates = []
    for entity in SUPPLIERS:
        short = entity.split("-")[1]
        candidates += [
            _item(f"TAX-{short}", entity, "tax_authority_record", "tax_registration_valid"),
            _item(f"INS-{short}", entity, "insurer_certificate", "insurance_in_force"),
            _item(f"SCR-{short}", entity, "screening_result", "sanctions_clear"),
            _item(f"WEB-{short}", entity, "web_page", "sanctions_clear", relevance=0.4),
        ]
    return {
        "directory": {"entities": {entity: [name] for entity, name in SUPPLIERS.items()}},
        "candidates": candidates,
    }


def create(*, owner, reviewer, catalogue_manager):
    """The catalogue's classes, the decision type (version 1 draft, shared with `reviewer`),
    its corpus and one scenario per supplier."""
    from scenarios import services as scenario_services

    existing = set(SourceClass.objects.values_list("key", flat=True))
    for key, label, tier, weak in CLASSES:
        if key not in existing:
            services.source_class_create(
                actor=catalogue_manager, key=key, label=label, description=label,
                authority_tier=tier, weak=weak,
            )  # fmt: skip
    decision_type = contracts_demo.create_contract(CONTRACT, owner=owner, reviewers=[reviewer])
    corpus = scenario_services.corpus_import(
        actor=owner, decision_type=decision_type, name="suppliers", document=corpus_document()
    )
    for name in SUPPLIERS.values():
        scenario_services.scenario_create(
            actor=owner, decision_type=decision_type, corpus=corpus,
            name=f"{name} first order", principal="priya", roles=["procurement_officer"],
            purpose="vendor_onboarding", entity=name, decision_date=dt.date(2026, 10, 5),
            token_budget=600,
            expected_slots={"tax_registration_valid": "supported",
                            "insurance_in_force": "supported", "sanctions_clear": "supported"},
        )  # fmt: skip
    return decision_type


def accept(owner, version, proposition: str, cls: str) -> None:
    version.refresh_from_db()
    services.accepted_class_add(
        actor=owner,
        proposition=version.propositions.get(key=proposition),
        expected_lock_version=version.lock_version,
        class_key=cls,
    )
