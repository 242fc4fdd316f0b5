"""The demo's review history: Atlas version 1 submitted, approved and published with
signatures made with olivia's and rafael's key files (`var/demo-keys/`, outside the database,
as `evidence-compiler keygen` writes them), version 2 drafted. Runs after `contracts.demo`
and `scenarios.demo` (the bundle names their test suite)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from compiler_trust import KeyLoadError, key_id, load_private_key_file, sign_as, write_key_files
from contracts import services
from contracts.demo import ATLAS, ATLAS_V2_CHANGE, OWNER, REVIEWER
from contracts.models import Approval, Bundle, ContractVersion, DecisionType, SigningKey
from contracts.services import Actor

from . import review, signing

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

DEMO_KEYS = "var/demo-keys"
"""Where the demo's people keep their key files: outside the database, git-ignored."""


class KeyFiles:
    """People's key files in a folder outside the database, made and used exactly as
    `evidence-compiler keygen` and `evidence-compiler sign-approval` make and use them: the
    demo (and the tests) sign for its people this way, never with a key the workbench holds."""

    def __init__(self, directory: str | Path):
        self.directory = Path(directory)

    def private_key(self, person: Actor) -> Ed25519PrivateKey:
        return load_private_key_file(self.directory / f"{person.get_username()}.key")

    def ensure(self, person: Actor) -> SigningKey:
        """The person's key file (created if missing) registered as their signing key."""
        name = person.get_username()
        if not (self.directory / f"{name}.key").exists():
            try:
                write_key_files(self.directory, name)
            except KeyLoadError:
                if not (self.directory / f"{name}.pub.pem").exists():  # not a concurrent keygen
                    raise
        kid = key_id(self.private_key(person))
        current = signing.signing_key(person)
        if current is not None and current.key_id == kid:
            return current
        public = (self.directory / f"{name}.pub.pem").read_bytes()
        return signing.signing_key_register(
            actor=None, user=person, public_key=public, origin=SigningKey.Origin.CLI
        )

    def approve(
        self,
        *,
        actor: Actor,
        version: ContractVersion,
        report_sha256: str,
        comment: str = "",
        acknowledged_widenings: Sequence[str] = (),
    ) -> Approval:
        statement = review.approval_statement(actor, version, report_sha256, acknowledged_widenings)
        return review.version_approve(
            actor=actor,
            version=version,
            report_sha256=report_sha256,
            signed_statement=self.sign(actor, statement),
            comment=comment,
            acknowledged_widenings=acknowledged_widenings,
        )

    def publish(self, *, actor: Actor, version: ContractVersion, **options: Any) -> Bundle:
        draft = review.publication_draft(actor=actor, version=version, **options)
        return review.version_publish(
            actor=actor,
            version=version,
            signed_statement=self.sign(actor, draft.statement),
            published_at=draft.published_at,
            expected_lock_version=options.get("expected_lock_version"),
        )

    def sign(self, person: Actor, statement: Any) -> Any:
        return sign_as(statement, self.private_key(person), signed_at=timezone.now())


def demo_key_files() -> KeyFiles:
    return KeyFiles(getattr(settings, "DEMO_KEYS_DIR", None) or Path(settings.BASE_DIR) / DEMO_KEYS)


def load_review(out: SupportsWrite[str]) -> None:
    """Signing keys for the owner and the reviewer, Atlas version 1 submitted by olivia,
    approved by rafael and published (signed by both), and version 2 started as a draft that
    swaps one accepted class. Runs after the scenarios are loaded (the bundle names their suite);
    does nothing to a type whose version 1 is no longer a draft."""
    user_model = get_user_model()
    owner = user_model.objects.get(username=OWNER)
    reviewer = user_model.objects.get(username=REVIEWER)
    people = demo_key_files()
    for person in (owner, reviewer):
        people.ensure(person)
    atlas = DecisionType.objects.filter(key=ATLAS.key).first()
    if atlas is None:
        return
    first = atlas.versions.filter(number=1).first()
    if first is None or first.status != ContractVersion.Status.DRAFT:
        return
    with transaction.atomic():
        version = review.version_submit(
            actor=owner, version=first, expected_lock_version=first.lock_version
        )
        report = review.report_ensure(version)
        people.approve(actor=reviewer, version=version, report_sha256=report.sha256)
        bundle = people.publish(actor=owner, version=version)
        draft = services.version_start_draft(actor=owner, decision_type=atlas)
        key, old, new = ATLAS_V2_CHANGE
        proposition = draft.propositions.get(key=key)
        services.accepted_class_remove(
            actor=owner,
            proposition=proposition,
            expected_lock_version=draft.lock_version,
            class_key=old,
        )
        draft.refresh_from_db()
        services.accepted_class_add(
            actor=owner,
            proposition=proposition,
            expected_lock_version=draft.lock_version,
            class_key=new,
        )
    out.write(
        f"Published {atlas.key} version 1 (bundle {bundle.sha256[:12]}…, signed by {OWNER} and "
        f"{REVIEWER}); version 2 is a draft where '{key}' accepts '{new}' instead of '{old}'.\n"
    )
