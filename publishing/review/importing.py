"""Importing a signed bundle: verify first, then record it, all or nothing.

The steps, in order: who may import, verify against this workbench's keys and their owners,
and the test suite (if given) against the sha256 the bundle names, the people it names, the
decision type (created if missing), its place in the bundle chain, the catalogue entries it
lacks, then the version as published and the bytes of the bundle and its suite."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone
from guardian.shortcuts import assign_perm

from compiler_trust import (
    BundleInvalid,
    Manifest,
    TrustedKey,
    VerifiedBundle,
    inspect_bundle,
    serialize_bundle,
    verify_bundle,
    verify_suite,
)
from contracts import roles
from contracts.documents import document_sha256
from contracts.models import (
    AuditAction,
    Bundle,
    BundleTestSuite,
    ContractVersion,
    DecisionType,
    Proposition,
    SourceClass,
)
from contracts.services import NOT_ALLOWED, Actor, audit_record
from publishing import signing

from .messages import UNKNOWN_SIGNER, VERSION_EXISTS, WRONG_PARENT
from .selectors import status_word

Status = ContractVersion.Status


@dataclass(frozen=True)
class Imported:
    bundle: Bundle
    created: bool  # False: the same bundle was already here


@transaction.atomic
def bundle_import(*, actor: Actor | None, data: bytes, tests: bytes | None = None) -> Imported:
    """Verify a bundle against this workbench's known keys (and their owners) and, only
    if it verifies, record it: the decision type (created if missing), the source classes
    it names that the catalogue lacks, the version — published, its propositions and
    frozen contract from the bundle — superseding the current published version, and the
    bundle's exact bytes. A format-3 bundle's test suite (`tests`, optional) is checked
    against the sha256 the bundle names and kept beside it, as published (a bundle already
    here gains the suite it lacked). Scenarios stay in the bundle or its suite: they are not
    turned into workbench scenarios (the type's own suite is the owners'). `BundleInvalid`
    (`SuiteInvalid` for the suite) or `ValidationError` means nothing was written."""
    if actor is not None and not (actor.is_authenticated and actor.is_superuser):
        raise PermissionDenied(NOT_ALLOWED)
    verified = verify_bundle(
        data, _trusted_keys(data), key_owners=signing.key_owners(), now=timezone.now()
    )
    if tests is not None:
        verify_suite(tests, verified)  # bytes: exactly the canonical form the manifest names
    existing = Bundle.objects.filter(sha256=verified.sha256).select_related("version").first()
    if existing is not None:
        _keep_suite(existing, verified, tests)
        return Imported(bundle=existing, created=False)
    manifest = verified.manifest
    people = _people(manifest)
    decision_type = _decision_type(
        manifest,
        publisher=people[manifest.publisher.person],
        approvers=[people[name] for name in manifest.approver_names],
    )
    previous, parent = _chain_position(decision_type, manifest)
    _add_missing_source_classes(verified)
    if previous is not None:
        previous.status = Status.SUPERSEDED
        previous.save(update_fields=["status", "updated_at"])
    version = _published_version(
        decision_type, verified, previous=previous, author=people[manifest.author]
    )
    bundle = Bundle.objects.create(
        version=version,
        decision_type=decision_type,
        parent=parent,
        sha256=verified.sha256,
        content=serialize_bundle(verified),
        published_at=dt.datetime.fromisoformat(manifest.published_at),
        publisher=people[manifest.publisher.person],
        imported=True,
    )
    _keep_suite(bundle, verified, tests)
    audit_record(
        actor=actor,
        action=AuditAction.BUNDLE_IMPORTED,
        summary=f"Imported the signed bundle of version {version.number} ({verified.sha256[:12]}…)",
        version=version,
        changes={
            "bundle_sha256": verified.sha256,
            "publisher": manifest.publisher.person,
            "approvers": list(manifest.approver_names),
            "key_ids": [s.key_id for s in verified.signatures],
        },
    )
    return Imported(bundle=bundle, created=True)


def _keep_suite(bundle: Bundle, verified: VerifiedBundle, suite: bytes | None) -> None:
    """Store the verified suite beside its bundle, once."""
    if suite is None or BundleTestSuite.objects.filter(bundle=bundle).exists():
        return
    assert verified.tests is not None  # verify_suite refuses a bundle that names no suite
    BundleTestSuite.objects.create(bundle=bundle, sha256=verified.tests.sha256, content=suite)


def _trusted_keys(data: bytes) -> dict[str, TrustedKey]:
    """This workbench's key set, each key scoped to the types its owner owns or reviews here;
    for a bundle of a type not here yet, which the import would create, the people who could
    create it and review it here (`signing.trusted_public_keys(new_type=…)`)."""
    try:
        decision_type = inspect_bundle(data).manifest.decision_type
    except BundleInvalid:
        return signing.trusted_public_keys()  # verify_bundle says what is wrong with it
    if DecisionType.objects.filter(key=decision_type).exists():
        return signing.trusted_public_keys()
    return signing.trusted_public_keys(new_type=decision_type)


def _people(manifest: Manifest) -> dict[str, User]:
    """The author, publisher and approvers, each a person here, by username."""
    users = get_user_model().objects
    people: dict[str, User] = {}
    for username in {manifest.author, manifest.publisher.person, *manifest.approver_names}:
        person = users.filter(username=username).first()
        if person is None:
            raise ValidationError(UNKNOWN_SIGNER.format(username=username))
        people[username] = person
    return people


def _decision_type(manifest: Manifest, *, publisher: User, approvers: list[User]) -> DecisionType:
    """The bundle's decision type, locked; created if missing, its publisher as owner and
    its approvers as reviewers, so that the type's next bundle is checked against the roles
    this one was admitted with."""
    decision_type = (
        DecisionType.objects.select_for_update().filter(key=manifest.decision_type).first()
    )
    if decision_type is not None:
        return decision_type
    decision_type = DecisionType.objects.create(
        key=manifest.decision_type,
        title=manifest.decision_type,
        description="Imported from a signed bundle.",
        created_by=publisher,
    )
    for perm in roles.ROLE_PERMISSIONS[roles.Role.OWNER]:
        assign_perm(perm, publisher, decision_type)
    for approver in approvers:
        for perm in roles.ROLE_PERMISSIONS[roles.Role.REVIEWER]:
            assign_perm(perm, approver, decision_type)
    return decision_type


def _chain_position(
    decision_type: DecisionType, manifest: Manifest
) -> tuple[ContractVersion | None, Bundle | None]:
    """The published version the bundle supersedes (locked) and its bundle, refusing a
    bundle that does not follow this type's current one or whose number is taken."""
    previous = decision_type.versions.select_for_update().filter(status=Status.PUBLISHED).first()
    current_bundle = Bundle.objects.filter(version=previous).first() if previous else None
    if (current_bundle.sha256 if current_bundle else None) != manifest.parent_sha256:
        raise ValidationError(
            WRONG_PARENT.format(
                parent=manifest.parent_sha256 or "(none: it is a first version)",
                key=decision_type.key,
                current=current_bundle.sha256 if current_bundle else "(none)",
            )
        )
    number = int(manifest.version)
    version = decision_type.versions.filter(number=number).first()
    if version is not None:
        raise ValidationError(
            VERSION_EXISTS.format(number=number, key=decision_type.key, status=status_word(version))
        )
    return previous, current_bundle


def _add_missing_source_classes(verified: VerifiedBundle) -> None:
    for entry in verified.bundle.source_classes:
        if not SourceClass.objects.filter(key=entry.key).exists():
            tier = entry.authority_tier if isinstance(entry.authority_tier, int) else 3
            SourceClass.objects.create(
                key=entry.key,
                label=entry.label,
                description=entry.description,
                authority_tier=tier,
                weak=entry.weak,
            )


def _published_version(
    decision_type: DecisionType,
    verified: VerifiedBundle,
    *,
    previous: ContractVersion | None,
    author: User,
) -> ContractVersion:
    """The version as the bundle's contract has it, created published (it may coexist with
    a draft of this workbench's own), with its propositions."""
    contract: dict[str, Any] = verified.contract.model_dump(mode="json")
    policy = contract["policy"]
    version = ContractVersion.objects.create(
        decision_type=decision_type,
        number=int(verified.manifest.version),
        status=Status.PUBLISHED,
        parent=previous,
        purposes=list(contract["purposes"]),
        policy_name=policy["name"],
        policy_version=policy["version"],
        min_relevance=policy["min_relevance"],
        mandatory_form=policy["mandatory_form"],
        role_order=list(policy["role_order"]),
        on_overrun=policy["on_overrun"],
        snapshot=contract,
        sha256=document_sha256(contract),
        created_by=author,
    )
    Proposition.objects.bulk_create(
        Proposition(
            version=version,
            position=position,
            key=p["key"],
            description=p.get("description", ""),
            accepted_classes=list(p["accepted_classes"]),
            required=p["required"],
            max_items=p.get("max_items", 1),
        )
        for position, p in enumerate(contract["propositions"])
    )
    return version
