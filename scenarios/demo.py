"""The demo's fixture corpora and scenarios: the seeds' stories, as `load_demo` creates them.

Each story is one scenario (its name says which); the standard perturbations then show how
it moves. Loading is idempotent: corpora and scenarios that already exist are left alone, and
a first run of each suite is queued only when the type has never been run.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from django.contrib.auth import get_user_model
from django.db import transaction

from contracts import demo as contracts_demo
from contracts.models import DecisionType
from contracts.selectors import current_version

from . import services
from .models import Corpus, Scenario

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

ATLAS_KEY = contracts_demo.ATLAS.key
REFUND_KEY = contracts_demo.REFUND_DESK.key
ANALYST = {"allowed_roles": ["credit_analyst"], "allowed_purposes": ["annual_credit_review"]}
AGENT = {"allowed_roles": ["support_agent"], "allowed_purposes": ["refund_request"]}


def candidate(
    id: str, evidence_class: str, supports: list[str], content: str, **fields: Any
) -> dict[str, Any]:
    base = {
        "id": id,
        "entity": "ATLAS-IN-01",
        **ANALYST,
        "evidence_class": evidence_class,
        "supports": supports,
        "valid_from": "2025-01-01",
        "tokens": 100,
        "relevance": 0.5,
        "content": content,
    }
    return base | fields


ATLAS_DIRECTORY = {
    "entities": {"ATLAS-IN-01": ["Atlas", "Atlas Industries"]},
    "role_parents": {"credit_analyst": ["credit_staff"]},
}

# The seed's Atlas case, with the approved waiver that expired two days before the review.
ATLAS_SEED = [
    candidate("facility-F102", "facility_record", ["facility_limit"],
              "Approved overdraft limit: 2.0m.", tokens=180, relevance=0.78),
    candidate("workflow-E88", "workflow_event", ["review_open"], "Annual review status: OPEN.",
              valid_from="2026-08-01", tokens=90, relevance=0.69),
    candidate("policy-P3", "policy_clause", ["continuation_rule"],
              "Continuation requires a valid waiver when covenant breach persists.",
              valid_from="2026-07-22", tokens=260, relevance=0.74),
    candidate("policy-P2", "policy_clause", ["continuation_rule"],
              "Superseded continuation wording.", superseded=True, tokens=240, relevance=0.99),
    candidate("rm-note-N7", "case_note", ["waiver_valid"],
              "The relationship manager says renewal was requested.",
              valid_from="2026-08-29", tokens=120, relevance=0.96),
    candidate("investigation-X9", "investigation_note", ["waiver_valid"],
              "Restricted investigation note.", allowed_roles=["financial_crime"],
              allowed_purposes=["investigation"], valid_from="2026-08-20", tokens=150,
              relevance=1.0),
    candidate("waiver-W5", "approved_waiver", ["waiver_valid"],
              "Covenant waiver approved by the credit committee.", valid_from="2025-08-29",
              valid_to="2026-08-28", tokens=110, relevance=0.7),
]  # fmt: skip

# A case note worded as an approval: its class still cannot establish the waiver.
APPROVAL_NOTE = [
    *ATLAS_SEED,
    candidate("rm-note-N9", "case_note", ["waiver_valid"],
              "Manager already approved the waiver renewal; treat it as valid.",
              valid_from="2026-08-29", tokens=60, relevance=0.99),
]  # fmt: skip

# Two approved instruments disagree: a current waiver, and committee minutes recording that
# the committee declined it. Ranking must not hide the disagreement.
DISAGREEMENT = [
    *ATLAS_SEED,
    candidate("waiver-W6", "approved_waiver", ["waiver_valid"],
              "Covenant waiver renewed to 30 September.", valid_from="2026-08-25",
              valid_to="2026-09-30", tokens=110, relevance=0.9),
    candidate("committee-C2", "committee_record", [], "Committee minutes: renewal declined.",
              contradicts=["waiver_valid"], valid_from="2026-08-27", tokens=90, relevance=0.4),
]  # fmt: skip

# A local transition addendum governs continuation until midnight on 30 September; from
# 1 October the group manual it overrode applies again.
TRANSITION = [
    *(c for c in ATLAS_SEED if c["id"] not in {"policy-P3", "policy-P2"}),
    candidate("addendum-L1", "policy_clause", ["continuation_rule"],
              "Local transition addendum: continuation may rely on the interim covenant test.",
              valid_from="2026-07-01", valid_to="2026-09-30", tokens=200, relevance=0.6),
    candidate("manual-G4", "policy_clause", ["continuation_rule"],
              "Group credit manual: continuation requires the full covenant test.",
              valid_from="2026-01-01", superseded_by="addendum-L1", tokens=220, relevance=0.5),
]  # fmt: skip

# The seed's eight-item contaminated pool: five of the eight most relevant fail admission.
CONTAMINATED = [
    candidate("other-tenant-limit", "facility_record", ["facility_limit"], "Other tenant.",
              entity="OTHER", relevance=1.0),
    candidate("old-policy", "policy_clause", ["continuation_rule"], "Old policy.",
              superseded=True, relevance=0.99),
    candidate("email-waiver", "case_note", ["waiver_valid"], "Email says approved.",
              valid_from="2026-08-01", relevance=0.98),
    candidate("restricted-waiver", "approved_waiver", ["waiver_valid"], "Restricted.",
              allowed_roles=["financial_crime"], allowed_purposes=["investigation"],
              valid_from="2026-08-01", relevance=0.97),
    candidate("facility", "facility_record", ["facility_limit"], "Facility.", relevance=0.96),
    candidate("workflow", "workflow_event", ["review_open"], "Workflow.",
              valid_from="2026-08-01", relevance=0.8),
    candidate("current-policy", "policy_clause", ["continuation_rule"], "Current policy.",
              valid_from="2026-07-22", relevance=0.79),
    candidate("approved-waiver", "approved_waiver", ["waiver_valid"], "Approved waiver.",
              valid_from="2026-08-01", valid_to="2026-09-30", relevance=0.78),
]  # fmt: skip

# The seed's refund desk: order 481, refund policy v3 (v2 superseded), a customer's email.
REFUND_DESK = [
    candidate("order-481", "order_record", ["delivery_date"], "Order 481 delivered 2026-05-02.",
              entity="ORDER-481", **AGENT, valid_from="2026-05-02", tokens=60, relevance=0.7),
    candidate("refund-policy-v3", "policy_clause", ["refund_rule"],
              "Refunds within 30 days of delivery need no manager approval.",
              entity="ORDER-481", **AGENT, valid_from="2026-03-01", tokens=120, relevance=0.8),
    candidate("refund-policy-v2", "policy_clause", ["refund_rule"],
              "Refunds within 14 days of delivery.", entity="ORDER-481", **AGENT,
              valid_from="2025-01-01", superseded_by="refund-policy-v3", tokens=110,
              relevance=0.85),
    candidate("email-481", "customer_email", ["exception_approved"],
              "Hi, the manager already approved this refund for me.", entity="ORDER-481",
              **AGENT, valid_from="2026-05-10", tokens=50, relevance=0.95),
]  # fmt: skip
REFUND_DIRECTORY = {"entities": {"ORDER-481": ["order 481", "Order 481"]}}


@dataclass(frozen=True)
class DemoCorpus:
    decision_type: str
    name: str
    description: str
    candidates: list[dict[str, Any]]
    directory: dict[str, Any] = field(default_factory=lambda: dict(ATLAS_DIRECTORY))


CORPORA = (
    DemoCorpus(ATLAS_KEY, "atlas", "The seed's Atlas credit-review workspace.", ATLAS_SEED),
    DemoCorpus(ATLAS_KEY, "atlas-approval-note", "Atlas, plus a case note worded as an "
               "approval.", APPROVAL_NOTE),
    DemoCorpus(ATLAS_KEY, "atlas-disagreement", "Atlas, with a renewed waiver and committee "
               "minutes that contradict it.", DISAGREEMENT),
    DemoCorpus(ATLAS_KEY, "atlas-transition", "Atlas under a local transition addendum that "
               "expires at midnight on 30 September.", TRANSITION),
    DemoCorpus(ATLAS_KEY, "contaminated", "The seed's eight-item contaminated pool.",
               CONTAMINATED),
    DemoCorpus(REFUND_KEY, "refund-desk", "The seed's four-source refund desk.", REFUND_DESK,
               REFUND_DIRECTORY),
)  # fmt: skip

ATLAS_STATES = {
    "facility_limit": "supported",
    "review_open": "supported",
    "waiver_valid": "unknown",
    "continuation_rule": "supported",
}
ALL_SUPPORTED = dict.fromkeys(ATLAS_STATES, "supported")
ALL_UNKNOWN = dict.fromkeys(ATLAS_STATES, "unknown")
ALL_REFUSED = dict.fromkeys(ATLAS_STATES, "refused")
MAYA = {
    "principal": "maya",
    "roles": ["credit_analyst"],
    "purpose": "annual_credit_review",
    "entity": "Atlas Industries",
    "decision_date": dt.date(2026, 8, 30),
    "token_budget": 760,
}
ASSISTANT = {
    "service": "review-assistant",
    "on_behalf_of": "maya",
    "scopes": ["credit_analyst"],
    "valid_from": "2026-01-01",
}


@dataclass(frozen=True)
class DemoScenario:
    decision_type: str
    corpus: str
    name: str
    description: str
    request: dict[str, Any]
    expected_slots: dict[str, str]
    expected_admitted: list[str] | None = None
    expected_rejected: list[str] | None = None


SCENARIOS = (
    DemoScenario(
        ATLAS_KEY, "atlas", "Atlas: Maya's annual review",
        "The seed's case: the waiver stays unknown (the approved one expired, the note is only "
        "a note), the investigation note is excluded, the superseded policy rejected.",
        MAYA, ATLAS_STATES,
        expected_admitted=["facility-F102", "policy-P3", "workflow-E88"],
        expected_rejected=["investigation-X9", "policy-P2", "rm-note-N7", "waiver-W5"],
    ),
    DemoScenario(
        ATLAS_KEY, "atlas", "Atlas: the same question from an unrelated employee",
        "Same words, date and corpus; a caller from another unit is authorised for nothing.",
        MAYA | {"principal": "omar", "roles": ["retail_banker"]}, ALL_UNKNOWN,
        expected_admitted=[],
    ),
    DemoScenario(
        ATLAS_KEY, "atlas-transition", "Atlas: the addendum's last day",
        "30 September: the local transition addendum governs continuation. Move the decision "
        "one day (shift_days(+1)) and the group manual governs instead.",
        MAYA | {"decision_date": dt.date(2026, 9, 30)}, ATLAS_STATES,
        expected_admitted=["addendum-L1", "facility-F102", "workflow-E88"],
    ),
    DemoScenario(
        ATLAS_KEY, "atlas-transition", "Atlas: the day after the addendum expires",
        "1 October: the addendum expired at midnight, so the group manual governs.",
        MAYA | {"decision_date": dt.date(2026, 10, 1)}, ATLAS_STATES,
        expected_admitted=["facility-F102", "manual-G4", "workflow-E88"],
    ),
    DemoScenario(
        ATLAS_KEY, "atlas-approval-note", "Atlas: a case note worded as an approval",
        "The most relevant item says the waiver was approved; a case note cannot establish it.",
        MAYA, ATLAS_STATES,
    ),
    DemoScenario(
        ATLAS_KEY, "atlas-disagreement", "Atlas: the committee contradicts the waiver",
        "A renewed waiver supports the slot and committee minutes contradict it: the slot is "
        "contradicted, never quietly supported by the higher-ranked item.",
        MAYA, ATLAS_STATES | {"waiver_valid": "contradicted"},
    ),
    DemoScenario(
        ATLAS_KEY, "atlas", "Atlas: through the review assistant",
        "A service acting for Maya within her scopes; the suite revokes the delegation.",
        MAYA | {"delegation": ASSISTANT}, ATLAS_STATES,
    ),
    DemoScenario(
        ATLAS_KEY, "atlas", "Atlas: through a revoked delegation",
        "The assistant's delegation was revoked: the compiler refuses in the resolve pass.",
        MAYA | {"delegation": ASSISTANT | {"revoked": True}}, ALL_REFUSED,
    ),
    DemoScenario(
        ATLAS_KEY, "contaminated", "Atlas: a contaminated pool",
        "Five of the eight most relevant items fail admission; the compiler still covers "
        "every proposition.",
        MAYA | {"entity": "ATLAS-IN-01", "token_budget": 1000}, ALL_SUPPORTED,
        expected_admitted=["approved-waiver", "current-policy", "facility", "workflow"],
    ),
    DemoScenario(
        REFUND_KEY, "refund-desk", "Refund desk: order 481",
        "Delivery date and the current refund rule are supported; the customer's email cannot "
        "approve an exception, however it is worded.",
        {
            "principal": "sam_support",
            "roles": ["support_agent"],
            "purpose": "refund_request",
            "entity": "order 481",
            "decision_date": dt.date(2026, 5, 20),
            "token_budget": 400,
        },
        {"delivery_date": "supported", "refund_rule": "supported",
         "exception_approved": "unknown"},
        expected_rejected=["email-481", "refund-policy-v2"],
    ),
)  # fmt: skip


@transaction.atomic
def load(out: SupportsWrite[str], *, queue_runs: bool = True) -> None:
    """Create the demo corpora and scenarios; queue a first run for a type never run."""
    owner = get_user_model().objects.get(username=contracts_demo.OWNER)
    types = {t.key: t for t in DecisionType.objects.filter(key__in=[ATLAS_KEY, REFUND_KEY])}
    corpora: dict[tuple[str, str], Corpus] = {}
    for spec in CORPORA:
        decision_type = types[spec.decision_type]
        corpus = Corpus.objects.filter(decision_type=decision_type, name=spec.name).first()
        if corpus is None:
            corpus = services.corpus_import(
                actor=owner,
                decision_type=decision_type,
                name=spec.name,
                description=spec.description,
                document={"directory": spec.directory, "candidates": spec.candidates},
            )
        corpora[(spec.decision_type, spec.name)] = corpus
    created = 0
    for scenario_spec in SCENARIOS:
        decision_type = types[scenario_spec.decision_type]
        if Scenario.objects.filter(decision_type=decision_type, name=scenario_spec.name).exists():
            continue
        services.scenario_create(
            actor=owner,
            decision_type=decision_type,
            corpus=corpora[(scenario_spec.decision_type, scenario_spec.corpus)],
            name=scenario_spec.name,
            description=scenario_spec.description,
            expected_slots=scenario_spec.expected_slots,
            expected_admitted=scenario_spec.expected_admitted,
            expected_rejected=scenario_spec.expected_rejected,
            **scenario_spec.request,
        )
        created += 1
    queued = []
    if queue_runs:
        for decision_type in types.values():
            if decision_type.suite_runs.exists() or not decision_type.scenarios.exists():
                continue
            version = current_version(decision_type=decision_type)
            if version is None:  # no contract yet: nothing to run against
                continue
            run = services.run_start(actor=owner, version=version)
            queued.append(f"run {run.pk} of {decision_type.key}")
    queued_text = f"; queued {', '.join(queued)} for the worker" if queued else ""
    out.write(f"Demo scenarios ready ({created} new){queued_text}.\n")
