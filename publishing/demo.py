"""The demo's review history: Atlas version 1 submitted, approved and published with
signatures, version 2 drafted. Runs after `contracts.demo` and `scenarios.demo` (the bundle
carries the scenarios)."""

from __future__ import annotations

from typing import TextIO

from django.contrib.auth import get_user_model
from django.db import transaction

from contracts import services
from contracts.demo import ATLAS, ATLAS_V2_CHANGE, OWNER, REVIEWER
from contracts.models import ContractVersion, DecisionType

from . import review, signing


def load_review(out: TextIO) -> None:
    """Signing keys for the owner and the reviewer, Atlas version 1 submitted by olivia,
    approved by rafael and published (signed by both), and version 2 started as a draft that
    swaps one accepted class. Runs after the scenarios are loaded (the bundle carries them);
    does nothing to a type whose version 1 is no longer a draft."""
    user_model = get_user_model()
    owner = user_model.objects.get(username=OWNER)
    reviewer = user_model.objects.get(username=REVIEWER)
    for person in (owner, reviewer):
        signing.signing_key_ensure(user=person)
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
        review.version_approve(actor=reviewer, version=version, report_sha256=report.sha256)
        bundle = review.version_publish(actor=owner, version=version)
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
