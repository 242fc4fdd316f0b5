"""Publishing an approved version: check, lock, build, check the publisher's signed
statement, assemble, store. Nothing is signed here: the approvals are the statements their
reviewers signed, and the publisher signs the publication statement (`publication_draft`
renders it) over the body's sha256 on their side.

`steps.lock` takes the decision type's row first, so publishes of one type run one after the
other; the bundle chain's constraints (one first bundle per type, one child per bundle) would
refuse a fork even without the lock."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from compiler_trust import (
    PublicationStatement,
    SignedStatement,
    assemble_bundle,
    bundle_body_hash,
    normalise_body,
    serialize_bundle,
    serialize_suite,
    verify_bundle,
    verify_suite,
)
from contracts.models import (
    Approval,
    AuditAction,
    Bundle,
    BundleTestSuite,
    ContractVersion,
    DecisionType,
    Review,
)
from contracts.services import Actor, audit_record
from publishing import signing

from .actions import PUBLISH
from .bundles import BundleParts, bundle_parts, refuse_failing_tests
from .messages import APPROVER_IS_EDITOR, APPROVER_IS_PUBLISHER, UNSIGNED_APPROVAL
from .selectors import authors, standing_approvals
from .statements import checked_statement, personal_key, publication_statement, stored_statement
from .steps import check_person, close_review, lock, require_action

Status = ContractVersion.Status


@dataclass(frozen=True)
class PublicationDraft:
    """What the publisher is asked to sign: the statement over the body built at
    `published_at` (the publish form sends `published_at` back, so the same body is built)."""

    statement: PublicationStatement
    published_at: dt.datetime
    bundle_sha256: str


@transaction.atomic
def publication_draft(
    *,
    actor: Actor,
    version: ContractVersion,
    published_at: dt.datetime | None = None,
    expected_lock_version: int | None = None,
) -> PublicationDraft:
    """The publication statement `actor` would sign to publish `version` now (the same
    checks as publishing; nothing is written)."""
    locked = lock(version)
    approvals = _check(actor, locked, expected_lock_version)
    moment = _moment(published_at)
    body, _ = _body(locked, actor, approvals, _parent(locked), moment)
    digest = bundle_body_hash(body)
    statement = publication_statement(actor, locked, digest)
    return PublicationDraft(statement=statement, published_at=moment, bundle_sha256=digest)


@transaction.atomic
def version_publish(
    *,
    actor: Actor,
    version: ContractVersion,
    signed_statement: SignedStatement | str | dict[str, Any] | None,
    published_at: dt.datetime,
    expected_lock_version: int | None = None,
) -> Bundle:
    """The owner publishes an approved version: the previous published version is
    superseded and the bundle (the publisher's publication statement + every standing
    approver's approval statement) is stored. Lint errors and approvals that no longer
    count (`counting_approvals`) refuse it; so does a publication statement that does not
    sign the body built at `published_at` (the one `publication_draft` rendered)."""
    locked = lock(version)
    approvals = _check(actor, locked, expected_lock_version)
    previous = _published_version(locked.decision_type)
    parent = Bundle.objects.filter(version=previous).first() if previous else None
    moment = _moment(published_at)
    body, suite = _body(locked, actor, approvals, parent, moment)
    signed = checked_statement(
        actor,
        locked,
        signed_statement,
        {"kind": "publication", "bundle_sha256": bundle_body_hash(body)},
    )
    document, data, suite_data = _assemble(body, suite, signed, approvals)
    if previous is not None:
        _supersede(previous, by=locked, actor=actor)
    bundle = _store(locked, actor, approvals, parent, document, data, moment)
    if suite_data is not None:
        BundleTestSuite.objects.create(
            bundle=bundle, sha256=document["manifest"]["tests"]["sha256"], content=suite_data
        )
    return bundle


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


def _approval_statements(
    version: ContractVersion | None, approvals: list[Approval]
) -> list[SignedStatement]:
    """Each counting approval's signed statement; an approval recorded before statements
    (nobody signed it on their side) cannot go into a bundle."""
    signed = []
    for approval in approvals:
        statement = stored_statement(approval.statement, approval.signature)
        if statement is None:
            raise ValidationError(
                UNSIGNED_APPROVAL.format(
                    username=approval.reviewer.get_username(),
                    number=version.number if version else approval.version.number,
                )
            )
        signed.append(statement)
    return signed


def _parent(version: ContractVersion) -> Bundle | None:
    previous = _published_version(version.decision_type)
    return Bundle.objects.filter(version=previous).first() if previous else None


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


def _body(
    version: ContractVersion,
    actor: Actor,
    approvals: list[Approval],
    parent: Bundle | None,
    moment: dt.datetime,
) -> BundleParts:
    """The normalised body and its test suite: the manifest names the publisher with their
    personal key and each approver with the key of their signed statement, the report they
    approved, and the test suite. A suite whose expectations fail for the contract is
    refused (`refuse_failing_tests`)."""
    statements = _approval_statements(version, approvals)
    key_ids = {s.statement.signer: s.statement.key_id for s in statements}
    key_ids[actor.get_username()] = personal_key(actor).key_id
    reports = {a.report_sha256 for a in approvals}
    parts = bundle_parts(
        version,
        publisher=actor.get_username(),
        approvers=[a.reviewer.get_username() for a in approvals],
        published_at=moment,
        parent_sha256=parent.sha256 if parent else None,
        key_ids=key_ids,
        report_sha256=reports.pop() if len(reports) == 1 else None,
    )
    body = normalise_body(parts.body)
    refuse_failing_tests(version, body, parts.suite)
    return BundleParts(body, parts.suite)


def _assemble(
    body: dict[str, Any],
    suite: dict[str, Any] | None,
    publication: SignedStatement,
    approvals: list[Approval],
) -> tuple[dict[str, Any], bytes, bytes | None]:
    """The bundle document from the signed statements, its exact bytes and its test suite's,
    verified as a retrieval service (and a pipeline running the tests) would verify them."""
    document = assemble_bundle(body, publication, _approval_statements(None, approvals))
    data = serialize_bundle(document)
    # Belt and braces: what we store must verify against what we publish as trusted keys.
    verified = verify_bundle(data, signing.trusted_public_keys())
    suite_data = serialize_suite(suite) if suite is not None else None
    if suite_data is not None:
        verify_suite(suite_data, verified)
    return document, data, suite_data


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
            "tests": document["manifest"].get("tests"),
            "approvers": approvers,
            "key_ids": [s["key_id"] for s in document["signatures"]],
        },
    )
    return bundle
