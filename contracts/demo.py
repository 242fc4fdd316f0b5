"""The demo workspace `python manage.py load_demo` creates, drawn from the seeds' two cases.

Kept as data plus one `load` function so later features (fixture corpora, scenarios, a
published version) extend it here. Loading is idempotent: people are brought back to their
demo groups and passwords, and anything else that already exists is left as it is.
Every change goes through `contracts.services`, so the demo has an audit trail like any other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TextIO

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction

from . import roles, services
from .models import DecisionType, SourceClass
from .selectors import current_version

Tier = SourceClass.AuthorityTier


@dataclass(frozen=True)
class DemoPerson:
    username: str
    name: str
    group: str
    # Local-only: printed by load_demo so a developer can sign in on 127.0.0.1.
    password: str


PEOPLE = (
    DemoPerson("olivia", "Olivia Owner", roles.POLICY_OWNERS, "olivia-local-demo"),
    DemoPerson("rafael", "Rafael Reviewer", roles.RISK_REVIEWERS, "rafael-local-demo"),
    DemoPerson("vera", "Vera Viewer", roles.VIEWERS, "vera-local-demo"),
)
OWNER, REVIEWER, VIEWER = (p.username for p in PEOPLE)

# key, label, tier, weak, description
SOURCE_CLASSES: tuple[tuple[str, str, Tier, bool, str], ...] = (
    (
        "facility_record",
        "Facility record",
        Tier.SYSTEM_OF_RECORD,
        False,
        "The facility system's record of an approved limit.",
    ),
    (
        "workflow_event",
        "Workflow event",
        Tier.SYSTEM_OF_RECORD,
        False,
        "A state change in the review workflow, e.g. an annual review opened.",
    ),
    (
        "policy_clause",
        "Policy clause",
        Tier.CONTROLLED_DOCUMENT,
        False,
        "A clause of the current, applicable credit or refund policy.",
    ),
    (
        "approved_waiver",
        "Approved waiver",
        Tier.APPROVED_INSTRUMENT,
        False,
        "A waiver object approved by its authority, with its validity interval.",
    ),
    (
        "committee_record",
        "Committee record",
        Tier.APPROVED_INSTRUMENT,
        False,
        "Minutes or a resolution of the credit committee.",
    ),
    (
        "case_note",
        "Case note",
        Tier.INFORMAL,
        True,
        "A relationship manager's note: narrative, never an approval.",
    ),
    (
        "investigation_note",
        "Investigation note",
        Tier.CONTROLLED_DOCUMENT,
        False,
        "Financial-crime material, restricted to its own role and purpose.",
    ),
    (
        "email",
        "Email summary",
        Tier.INFORMAL,
        True,
        "An internal email; may corroborate but cannot establish a fact alone.",
    ),
    (
        "order_record",
        "Order record",
        Tier.SYSTEM_OF_RECORD,
        False,
        "The order system's record, including the delivery date.",
    ),
    (
        "approval_record",
        "Approval record",
        Tier.APPROVED_INSTRUMENT,
        False,
        "A manager's approval object in the refund system.",
    ),
    (
        "customer_email",
        "Customer email",
        Tier.INFORMAL,
        True,
        "What a customer wrote; may ask for an exception, can never grant one.",
    ),
)


@dataclass(frozen=True)
class DemoProposition:
    key: str
    accepted_classes: tuple[str, ...]
    description: str
    required: bool = True
    max_items: int = 1


@dataclass(frozen=True)
class DemoContract:
    key: str
    title: str
    description: str
    purposes: tuple[str, ...]
    propositions: tuple[DemoProposition, ...]
    reviewers: tuple[str, ...] = (REVIEWER,)
    viewers: tuple[str, ...] = (VIEWER,)


ATLAS = DemoContract(
    key="credit.review.continuation",
    title="Credit review: continue the facility",
    description=(
        "May Atlas Industries' overdraft facility continue through its annual review? "
        "The seed's main worked example."
    ),
    purposes=("annual_credit_review",),
    propositions=(
        DemoProposition("facility_limit", ("facility_record",), "The approved facility limit."),
        DemoProposition("review_open", ("workflow_event",), "The annual review is open."),
        DemoProposition(
            "waiver_valid",
            ("approved_waiver", "committee_record"),
            "A covenant waiver is valid on the decision date.",
        ),
        DemoProposition(
            "continuation_rule", ("policy_clause",), "The policy rule that governs continuation."
        ),
    ),
)

REFUND_DESK = DemoContract(
    key="refund.eligibility",
    title="Refund desk: refund without manager approval",
    description="May order 481 be refunded without a manager's approval?",
    purposes=("refund_request",),
    propositions=(
        DemoProposition("delivery_date", ("order_record",), "When the order was delivered."),
        DemoProposition("refund_rule", ("policy_clause",), "The ordinary refund rule in force."),
        DemoProposition(
            "exception_approved", ("approval_record",), "A manager approved an exception."
        ),
    ),
)

CONTRACTS = (ATLAS, REFUND_DESK)


@transaction.atomic
def load(out: TextIO) -> None:
    users = {person.username: _person(person) for person in PEOPLE}
    owner = users[OWNER]
    for key, label, tier, weak, description in SOURCE_CLASSES:
        if not SourceClass.objects.filter(key=key).exists():
            services.source_class_create(
                actor=owner,
                key=key,
                label=label,
                description=description,
                authority_tier=tier,
                weak=weak,
            )
    for contract in CONTRACTS:
        _contract(contract, owner=owner, users=users)
    out.write("Demo workspace ready. Local-only sign-ins (never use these anywhere else):\n")
    for person in PEOPLE:
        out.write(f"  {person.username:<8} {person.password:<20} {person.group}\n")


def _person(person: DemoPerson):
    user_model = get_user_model()
    user, _ = user_model.objects.get_or_create(username=person.username)
    first, _, last = person.name.partition(" ")
    user.first_name, user.last_name = first, last
    user.set_password(person.password)
    user.save()
    user.groups.add(Group.objects.get(name=person.group))
    # A fresh instance: permission caches must see the group just added.
    return user_model.objects.get(pk=user.pk)


def _contract(contract: DemoContract, *, owner, users) -> None:
    if DecisionType.objects.filter(key=contract.key).exists():
        return
    decision_type = services.decision_type_create(
        actor=owner,
        key=contract.key,
        title=contract.title,
        description=contract.description,
        purposes=contract.purposes,
    )
    version = current_version(decision_type=decision_type)
    for proposition in contract.propositions:
        services.proposition_add(
            actor=owner,
            version=version,
            expected_lock_version=version.lock_version,
            key=proposition.key,
            description=proposition.description,
            accepted_classes=proposition.accepted_classes,
            required=proposition.required,
            max_items=proposition.max_items,
        )
        version.refresh_from_db()
    for username in contract.reviewers:
        services.access_grant(
            actor=owner, decision_type=decision_type, user=users[username], role=roles.Role.REVIEWER
        )
    for username in contract.viewers:
        services.access_grant(
            actor=owner, decision_type=decision_type, user=users[username], role=roles.Role.VIEWER
        )
