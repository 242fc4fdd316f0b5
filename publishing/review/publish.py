"""Publishing an approved version: check, lock, build, sign, store.

`steps.lock` takes the decision type's row first, so publishes of one type run one after the
other; the bundle chain's constraints (one first bundle per type, one child per bundle) would
refuse a fork even without the lock."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from compiler.bundle import serialize_bundle, sign_bundle, verify_bundle
from contracts.models import Approval, AuditAction, Bundle, ContractVersion, DecisionType, Review
from contracts.services import Actor, audit_record
from publishing import signing

from .actions import PUBLISH
from .bundles import bundle_body
from .messages import APPROVER_IS_EDITOR, APPROVER_IS_PUBLISHER, NO_SIGNING_KEY
from .selectors import authors, standing_approvals
from .steps import check_person, close_review, lock, require_action

Status = ContractVersion.Status
# (person, role, private key), in the order `sign_bundle` signs.
Signer = tuple[str, str, Any]


@transaction.atomic
def version_publish(
    *,
    actor: Actor,
    version: ContractVersion,
    published_at: dt.datetime | None = None,
    expected_lock_version: int | None = None,
) -> Bundle:
    """The owner publishes an approved version: the previous published version is
    superseded and the signed bundle (publisher + every standing approver) is stored.
    Lint errors and approvals that no longer count (`counting_approvals`) refuse it."""
    locked = lock(version)
    approvals = _check(actor, locked, expected_lock_version)
    signers = _signers(actor, approvals)
    previous = _published_version(locked.decision_type)
    parent = Bundle.objects.filter(version=previous).first() if previous else None
    moment = _moment(published_at)
    document, data = _build_and_sign(locked, actor, approvals, signers, parent, moment)
    if previous is not None:
        _supersede(previous, by=locked, actor=actor)
    return _store(locked, actor, approvals, parent, document, data, moment)


def _check(
    actor: Actor, version: ContractVersion, expected_lock_version: int | None
) -> list[Approval]:
    """The person, their page's lock version, four eyes, then the action's rule: the
    approvals that count."""
    facts = check_person(actor, version, PUBLISH, expected_lock_version)
    _refuse_own_approvals(version, actor, standing_approvals(version))
    approvals, _ = require_action(facts, PUBLISH).counting
    return approvals


def _refuse_own_approvals(
    version: ContractVersion, publisher: Actor, approvals: list[Approval]
) -> None:
    """Four eyes again at publishing: an approval by the publisher (a reviewer since made
    owner) or by someone who has since become an editor is refused, naming them, rather
    than dropped; the bundle's verifier would refuse it anyway."""
    editors = authors(version)
    for approval in approvals:
        if approval.reviewer_id == publisher.pk:
            message = APPROVER_IS_PUBLISHER
        elif approval.reviewer_id in editors:
            message = APPROVER_IS_EDITOR
        else:
            continue
        raise ValidationError(
            message.format(username=approval.reviewer.get_username(), number=version.number)
        )


def _signers(actor: Actor, approvals: list[Approval]) -> list[Signer]:
    """The publisher, then each approver, with the private key each signs with now."""
    people = [(actor, "publisher")] + [(a.reviewer, "approver") for a in approvals]
    signers: list[Signer] = []
    for person, role in people:
        key = signing.active_key(person)
        if key is None:
            raise ValidationError(NO_SIGNING_KEY.format(username=person.get_username()))
        signers.append((person.get_username(), role, signing.private_key(key)))
    return signers


def _published_version(decision_type: DecisionType) -> ContractVersion | None:
    """The version this publish supersedes, locked."""
    return (
        decision_type.versions.select_for_update(of=("self",))
        .filter(status=Status.PUBLISHED)
        .first()
    )


def _moment(published_at: dt.datetime | None) -> dt.datetime:
    moment = published_at or timezone.now()
    if timezone.is_naive(moment):
        raise ValueError("published_at needs a time zone")
    return moment.astimezone(dt.UTC).replace(microsecond=0)


def _build_and_sign(
    version: ContractVersion,
    actor: Actor,
    approvals: list[Approval],
    signers: list[Signer],
    parent: Bundle | None,
    moment: dt.datetime,
) -> tuple[dict[str, Any], bytes]:
    """The signed bundle document and its exact bytes, verified as a retrieval service
    would verify them."""
    body = bundle_body(
        version,
        publisher=actor.get_username(),
        approvers=[a.reviewer.get_username() for a in approvals],
        published_at=moment,
        parent_sha256=parent.sha256 if parent else None,
    )
    document = sign_bundle(body, signers)
    data = serialize_bundle(document)
    # Belt and braces: what we store must verify against what we publish as trusted keys.
    verify_bundle(data, signing.trusted_public_keys(), key_owners=signing.key_owners())
    return document, data


def _supersede(previous: ContractVersion, *, by: ContractVersion, actor: Actor) -> None:
    previous.status = Status.SUPERSEDED
    previous.save(update_fields=["status", "updated_at"])
    audit_record(
        actor=actor,
        action=AuditAction.SUPERSEDED,
        summary=f"Version {previous.number} superseded by version {by.number}",
        version=previous,
    )


def _store(
    version: ContractVersion,
    actor: Actor,
    approvals: list[Approval],
    parent: Bundle | None,
    document: dict[str, Any],
    data: bytes,
    moment: dt.datetime,
) -> Bundle:
    """Mark the version published, keep the bundle's exact bytes, close the review."""
    version.status = Status.PUBLISHED
    version.save(update_fields=["status", "updated_at"])
    bundle = Bundle.objects.create(
        version=version,
        decision_type=version.decision_type,
        parent=parent,
        sha256=document["sha256"],
        content=data,
        published_at=moment,
        publisher=actor,
    )
    close_review(version, actor=actor, outcome=Review.Outcome.PUBLISHED)
    approvers = [a.reviewer.get_username() for a in approvals]
    audit_record(
        actor=actor,
        action=AuditAction.PUBLISHED,
        summary=f"Published version {version.number} (bundle {bundle.sha256[:12]}…, approved "
        f"by {', '.join(approvers)})",
        version=version,
        changes={
            "bundle_sha256": bundle.sha256,
            "parent_sha256": parent.sha256 if parent else None,
            "approvers": approvers,
            "key_ids": [s["key_id"] for s in document["signatures"]],
        },
    )
    return bundle
