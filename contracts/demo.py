"""The demo workspace `python manage.py load_demo` creates, drawn from the seeds' two cases.

Kept as data plus one `load` function so later features (fixture corpora, scenarios, a
published version) extend it here. Loading is idempotent: people are brought back to their
demo groups and passwords, and anything else that already exists is left as it is.
Every change goes through `contracts.services`, so the demo has an audit trail like any other.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction

from . import roles, services
from .models import DecisionType, SourceClass

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

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
    DemoPerson("cora", "Cora Cataloguer", roles.CATALOGUE_MANAGERS, "cora-local-demo"),
)
OWNER, REVIEWER, VIEWER, CATALOGUE_MANAGER = (p.username for p in PEOPLE)


@dataclass(frozen=True)
class DemoSourceClass:
    key: str
    label: str
    tier: Tier
    description: str
    weak: bool = False


SOURCE_CLASSES = (
    DemoSourceClass("facility_record", "Facility record", Tier.SYSTEM_OF_RECORD,
                    "The facility system's record of an approved limit."),
    DemoSourceClass("workflow_event", "Workflow event", Tier.SYSTEM_OF_RECORD,
                    "A state change in the review workflow, e.g. an annual review opened."),
    DemoSourceClass("policy_clause", "Policy clause", Tier.CONTROLLED_DOCUMENT,
                    "A clause of the current, applicable credit or refund policy."),
    DemoSourceClass("approved_waiver", "Approved waiver", Tier.APPROVED_INSTRUMENT,
                    "A waiver object approved by its authority, with its validity interval."),
    DemoSourceClass("committee_record", "Committee record", Tier.APPROVED_INSTRUMENT,
                    "Minutes or a resolution of the credit committee."),
    DemoSourceClass("case_note", "Case note", Tier.INFORMAL,
                    "A relationship manager's note: narrative, never an approval.", weak=True),
    DemoSourceClass("investigation_note", "Investigation note", Tier.CONTROLLED_DOCUMENT,
                    "Financial-crime material, restricted to its own role and purpose."),
    DemoSourceClass("email", "Email summary", Tier.INFORMAL,
                    "An internal email; may corroborate, cannot establish a fact alone.",
                    weak=True),
    DemoSourceClass("order_record", "Order record", Tier.SYSTEM_OF_RECORD,
                    "The order system's record, including the delivery date."),
    DemoSourceClass("approval_record", "Approval record", Tier.APPROVED_INSTRUMENT,
                    "A manager's approval object in the refund system."),
    DemoSourceClass("customer_email", "Customer email", Tier.INFORMAL,
                    "What a customer wrote; may ask for an exception, never grant one.",
                    weak=True),
)  # fmt: skip


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
    # The catalogue manager reads the demo types, so a catalogue change's impact names them.
    viewers: tuple[str, ...] = (VIEWER, CATALOGUE_MANAGER)


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

# The demo's second Atlas version swaps one accepted class: the waiver may be established by a
# relationship manager's case note instead of a committee record. The impact report shows
# what that would do (the seed's note would suddenly "prove" the expired waiver).
ATLAS_V2_CHANGE = ("waiver_valid", "committee_record", "case_note")


@transaction.atomic
def load(out: SupportsWrite[str]) -> None:
    users = {person.username: _person(person) for person in PEOPLE}
    owner = users[OWNER]
    create_source_classes(actor=users[CATALOGUE_MANAGER])
    for contract in CONTRACTS:
        if not DecisionType.objects.filter(key=contract.key).exists():
            create_contract(
                contract,
                owner=owner,
                reviewers=[users[name] for name in contract.reviewers],
                viewers=[users[name] for name in contract.viewers],
            )
    out.write("Demo workspace ready. Local-only sign-ins (never use these anywhere else):\n")
    for person in PEOPLE:
        out.write(f"  {person.username:<8} {person.password:<20} {person.group}\n")


def create_source_classes(*, actor) -> None:
    """Create the demo catalogue's classes that do not exist yet (`actor` manages the
    catalogue)."""
    existing = set(SourceClass.objects.values_list("key", flat=True))
    for source_class in SOURCE_CLASSES:
        if source_class.key not in existing:
            services.source_class_create(
                actor=actor,
                key=source_class.key,
                label=source_class.label,
                description=source_class.description,
                authority_tier=source_class.tier,
                weak=source_class.weak,
            )


def create_contract(
    contract: DemoContract, *, owner, reviewers: Iterable = (), viewers: Iterable = ()
) -> DecisionType:
    """Create the decision type with its version 1 draft and grant the given people access."""
    decision_type = services.decision_type_create(
        actor=owner,
        key=contract.key,
        title=contract.title,
        description=contract.description,
        purposes=contract.purposes,
    )
    version = decision_type.versions.get()  # a new type's one draft
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
    for role, people in ((roles.Role.REVIEWER, reviewers), (roles.Role.VIEWER, viewers)):
        for person in people:
            services.access_grant(actor=owner, decision_type=decision_type, user=person, role=role)
    return decision_type


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
