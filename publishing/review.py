"""The review and publishing transitions of a contract version, and bundle import.

    draft ──submit──▶ in review ──approve──▶ approved ──publish──▶ published ──▶ superseded
      ▲                  │  ▲                   │                     │
      └─ edit/withdraw ──┘  └── more approvals ─┘                     └──retire──▶ retired
      ▲                  │
      └── edit ── changes requested ◀── request changes (from in review or approved)

Each transition is one function here: it locks what it is about to change, always in the
same order (the decision type's row, then the version's, each `of=("self",)` so no joined
row is locked by accident), checks permission and state, changes the state and writes one
audit event, all in one transaction. Views, management commands, the demo and the tests call
these same functions. What a person may do with a version now is decided in one place,
`available_actions`: the transitions refuse exactly what it refuses, and the pages show
exactly the buttons it allows.

They live in their own module rather than in `contracts.services` because they depend on
the scenarios app (the impact report compiles the type's scenarios; the bundle carries
them) and on signing, while `contracts.services` is imported by the scenarios app itself;
keeping the edit services free of those imports keeps the dependency one-way. The editing
side of the four-eyes rule (an edit returns the version to draft and voids its approvals)
lives in `services._lock_draft`, which every edit already goes through.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone
from guardian.shortcuts import assign_perm

from compiler import COMPILER_VERSION
from compiler.bundle import (
    FORMAT,
    BundleInvalid,
    serialize_bundle,
    sign_bundle,
    verify_bundle,
)
from compiler.canonical import sha256_hex
from contracts import lint, roles, selectors
from contracts.documents import (
    ContractInvalid,
    compiled_contract,
    compiler_json,
    document_sha256,
)
from contracts.models import (
    EDIT_ACTIONS,
    Approval,
    AuditAction,
    AuditEvent,
    Bundle,
    ContractVersion,
    DecisionType,
    Proposition,
    Review,
    SourceClass,
)
from contracts.services import (
    NOT_ALLOWED,
    STALE_EDIT,
    Actor,
    EditConflict,
    _require,
    _return_to_draft,
    _void_approvals,
    audit_record,
)

from . import signing
from .impact import ImpactReport, impact_report

Status = ContractVersion.Status

# Messages tests assert on.
CANNOT_SUBMIT = "Version {number} is {status}; only a draft (or one sent back) can be submitted."
INVALID_CONTRACT = "Version {number} is not a valid contract yet: {problems}"
NOT_IN_REVIEW = "Version {number} is {status}; only a version in review can be {verb}."
OWN_VERSION = (
    "You drafted or edited version {number}, so you cannot approve it: "
    "four eyes means someone else reviews it."
)
ALREADY_APPROVED = "You have already approved version {number}."
REPORT_CHANGED = (
    "The impact report changed after you opened it (the version, the published contract or "
    "the scenarios moved on), so nothing was approved. Read the current report and decide again."
)
NO_SIGNING_KEY = (
    "{username} has no signing key; create one on the Signing keys page "
    "(or `python manage.py generate_signing_key {username}`) first."
)
COMMENT_REQUIRED = "Say what needs to change."
NOT_APPROVED = "Version {number} is {status}; only an approved version can be published."
NO_STANDING_APPROVAL = (
    "Version {number} has no approval of its current content; it must be reviewed again."
)
REPORT_CHANGED_SINCE_APPROVAL = (
    "The impact report of version {number} changed after it was approved (a scenario, its "
    "expectations or a corpus moved on), and the bundle would carry what no reviewer saw. "
    "Return it to draft and submit it again, so that it is approved as it is now."
)
CANNOT_RETIRE = "Version {number} is {status}; it cannot be retired."
CANNOT_WITHDRAW = "Version {number} is {status}; there is nothing to withdraw."
UNKNOWN_SIGNER = "The bundle names '{username}', who is not a person in this workbench."
VERSION_EXISTS = (
    "This workbench already has version {number} of '{key}' ({status}) with different content; "
    "nothing was imported."
)
WRONG_PARENT = (
    "The bundle follows the bundle {parent}, but this workbench's latest published bundle of "
    "'{key}' is {current}; import the bundles in the order they were published."
)
NO_BUNDLE = "Version {number} has no bundle: it was never published."
APPROVER_IS_PUBLISHER = (
    "{username} approved version {number}, so they cannot also publish it: four eyes means "
    "another owner publishes it."
)
APPROVER_IS_EDITOR = (
    "{username} approved version {number} but has since edited it, so their approval does not "
    "count: return it to draft and submit it again for someone else to approve."
)
LINT_ERRORS = "Version {number} cannot be {verb} while its lint reports errors: {errors}"
CATALOGUE_CHANGED_SINCE_APPROVAL = (
    "The source-class catalogue changed after version {number} was approved (a label, "
    "description, authority tier or weakness of a class it accepts), and the bundle would "
    "carry what no reviewer saw. Return it to draft and submit it again."
)
NO_SCENARIO = (
    "No scenario exercises this contract: the impact report compiles nothing, so nobody has "
    "seen what it admits or refuses."
)
APPROVAL_OUT_OF_DATE = "Approval out of date"


# --------------------------------------------------------------------------- helpers


def _lock(version: ContractVersion) -> ContractVersion:
    """Lock the decision type's row, then the version's: every transition (and
    `version_start_draft`) takes them in this order, so none can wait on another in a cycle.
    `of=("self",)` keeps the joined rows (the type, the author) unlocked."""
    DecisionType.objects.select_for_update(of=("self",)).get(pk=version.decision_type_id)
    return (
        ContractVersion.objects.select_for_update(of=("self",))
        .select_related("decision_type", "created_by")
        .get(pk=version.pk)
    )


def _check_lock(version: ContractVersion, expected_lock_version: int | None) -> None:
    """Buttons carry the lock version their page showed: acting on a version that changed
    since would act on something the person has not seen."""
    if expected_lock_version is not None and version.lock_version != expected_lock_version:
        raise EditConflict(STALE_EDIT)


def _status(version: ContractVersion) -> str:
    return version.get_status_display().lower()


def _active_review(version: ContractVersion) -> Review | None:
    return (
        Review.objects.select_for_update().filter(version=version, closed_at__isnull=True).first()
    )


def _close_review(
    version: ContractVersion, *, actor: Actor, outcome: str, comment: str = ""
) -> Review | None:
    review = _active_review(version)
    if review is not None:
        review.closed_at = timezone.now()
        review.closed_by = actor if actor.is_authenticated else None
        review.outcome = outcome
        if comment:
            review.comment = comment
        review.save(update_fields=["closed_at", "closed_by", "outcome", "comment"])
    return review


def authors(version: ContractVersion) -> set[int]:
    """Who drafted or edited the version: its creator and every actor of an edit event."""
    editors = set(
        AuditEvent.objects.filter(version=version, action__in=EDIT_ACTIONS, actor__isnull=False)
        .values_list("actor_id", flat=True)
        .distinct()
    )
    return editors | {version.created_by_id}


def may_approve(user: Actor, version: ContractVersion) -> bool:
    """The approve button's rule (see `available_actions`)."""
    return available_actions(user, version)[APPROVE].allowed


def standing_approvals(version: ContractVersion) -> list[Approval]:
    """Approvals of the version's current content, given in its active (or publishing) review."""
    return list(
        Approval.objects.standing()
        .filter(
            version=version,
            version_lock=version.lock_version,
            contract_sha256=version.sha256,
        )
        .select_related("reviewer", "review")
        .order_by("reviewer__username")
    )


def bundle_source_classes(contract: dict[str, Any]) -> list[dict[str, Any]]:
    """The catalogue entries a bundle of `contract` carries: the classes it accepts."""
    accepted = sorted({c for p in contract["propositions"] for c in p["accepted_classes"]})
    return [
        {
            "key": c.key,
            "label": c.label,
            "description": c.description,
            "authority_tier": c.authority_tier,
            "weak": c.weak,
        }
        for c in SourceClass.objects.filter(key__in=accepted).order_by("key")
    ]


def catalogue_sha256(version: ContractVersion) -> str:
    """The hash an approval records over the catalogue entries the bundle would carry, so
    relabelling a class after approval cannot reach a signed bundle unreviewed."""
    contract = compiled_contract(version).model_dump(mode="json")
    return sha256_hex(bundle_source_classes(contract))


def counting_approvals(version: ContractVersion) -> tuple[list[Approval], str]:
    """The approvals a publish would count now, or (none and) why none counts: only approvals
    of the current content, by a non-author, of the report as it is now (it is memoised, so
    recomputing it costs little) and of the catalogue entries as they are now."""
    approvals = standing_approvals(version)
    author_ids = authors(version)
    approvals = [a for a in approvals if a.reviewer_id not in author_ids]
    if not approvals:
        return [], NO_STANDING_APPROVAL.format(number=version.number)
    # The approvers sign the scenarios and expectations the bundle carries.
    report_sha256 = report_for(version).sha256
    approvals = [a for a in approvals if a.report_sha256 == report_sha256]
    if not approvals:
        return [], REPORT_CHANGED_SINCE_APPROVAL.format(number=version.number)
    catalogue = catalogue_sha256(version)
    approvals = [a for a in approvals if a.catalogue_sha256 == catalogue]
    if not approvals:
        return [], CATALOGUE_CHANGED_SINCE_APPROVAL.format(number=version.number)
    return approvals, ""


def shown_status(version: ContractVersion) -> tuple[str, str]:
    """The status to show: the one Publish would act on. An approved version none of whose
    approvals counts any more (a scenario or the catalogue moved on) is not shown approved."""
    if version.status == Status.APPROVED and counting_approvals(version)[1]:
        return Status.IN_REVIEW.value, APPROVAL_OUT_OF_DATE
    return version.status, version.get_status_display()


def review_warnings(version: ContractVersion) -> list[str]:
    """What a reviewer should know before deciding but that does not block: lint warnings,
    and a contract no scenario exercises."""
    from scenarios.models import Scenario

    found = [f.message for f in lint.warnings(_lint(version))]
    if not Scenario.objects.filter(decision_type_id=version.decision_type_id).exists():
        found.append(NO_SCENARIO)
    return found


def _lint(version: ContractVersion) -> list[lint.Finding]:
    return selectors.version_lint(version=version)


# --------------------------------------------------------------------------- actions

SUBMIT, WITHDRAW, APPROVE, REQUEST_CHANGES, PUBLISH, RETIRE = (
    "submit",
    "withdraw",
    "approve",
    "request_changes",
    "publish",
    "retire",
)


@dataclass(frozen=True)
class Action:
    """One transition as this person may (or may not) take it on this version now.

    `reason` says why it is refused ("" when allowed). `forbidden` refusals are about the
    person (no role, or their own version): the button is not shown and the action answers
    403. `applies` is False when the version's state rules the action out (the button is not
    shown); an action that applies but is refused is shown with its reason."""

    name: str
    label: str
    reason: str = ""
    forbidden: bool = False
    applies: bool = True

    @property
    def allowed(self) -> bool:
        return not self.reason

    @property
    def blocked(self) -> bool:
        """Shown to the person as refused, with the reason."""
        return bool(self.reason) and self.applies and not self.forbidden

    def refusal(self) -> Exception:
        if self.forbidden:
            return PermissionDenied(self.reason)
        return ValidationError(self.reason)


class _Facts:
    """What the checks read, each computed at most once."""

    def __init__(self, user: Actor, version: ContractVersion) -> None:
        self.user, self.version = user, version
        self.number, self.status = version.number, version.status

    def has(self, perm: str) -> bool:
        return self.user.is_authenticated and self.user.has_perm(
            f"contracts.{perm}", self.version.decision_type
        )

    @cached_property
    def state(self) -> str:
        return _status(self.version)

    @cached_property
    def lint_errors(self) -> str:
        return " ".join(f.message for f in lint.errors(_lint(self.version)))

    def lint(self, verb: str) -> str:
        if not self.lint_errors:
            return ""
        return LINT_ERRORS.format(number=self.number, verb=verb, errors=self.lint_errors)

    @cached_property
    def counting(self) -> tuple[list[Approval], str]:
        return counting_approvals(self.version)

    def missing_key(self, *people: Any) -> str:
        for person in people:
            if signing.active_key(person) is None:
                return NO_SIGNING_KEY.format(username=person.get_username())
        return ""


# Each check answers (reason, forbidden, applies) for the first rule that refuses, else None.
Refusal = tuple[str, bool, bool] | None
REVIEWABLE = (Status.IN_REVIEW, Status.APPROVED)


def _forbidden(reason: str = NOT_ALLOWED) -> Refusal:
    return reason, True, True


def _not_now(reason: str) -> Refusal:
    return reason, False, False


def _blocked(reason: str) -> Refusal:
    return (reason, False, True) if reason else None


def _check_submit(f: _Facts) -> Refusal:
    if not f.has(roles.EDIT):
        return _forbidden()
    if not f.version.is_editable:
        return _not_now(CANNOT_SUBMIT.format(number=f.number, status=f.state))
    try:
        compiled_contract(f.version)
    except ContractInvalid as exc:
        return _blocked(INVALID_CONTRACT.format(number=f.number, problems=str(exc)))
    return _blocked(f.lint("submitted"))


def _check_withdraw(f: _Facts) -> Refusal:
    if not f.has(roles.EDIT):
        return _forbidden()
    if f.status not in REVIEWABLE:
        return _not_now(CANNOT_WITHDRAW.format(number=f.number, status=f.state))
    return None


def _check_approve(f: _Facts) -> Refusal:
    if not f.has(roles.REVIEW):
        return _forbidden()
    if f.status not in REVIEWABLE:
        return _not_now(NOT_IN_REVIEW.format(number=f.number, status=f.state, verb="approved"))
    if f.user.pk in authors(f.version):
        return _forbidden(OWN_VERSION.format(number=f.number))
    already = Approval.objects.filter(
        version=f.version, reviewer=f.user, review__closed_at__isnull=True, voided_at__isnull=True
    )
    if already.exists():
        return _not_now(ALREADY_APPROVED.format(number=f.number))
    return _blocked(f.missing_key(f.user) or f.lint("approved"))


def _check_request_changes(f: _Facts) -> Refusal:
    if not f.has(roles.REVIEW):
        return _forbidden()
    if f.status not in REVIEWABLE:
        return _not_now(NOT_IN_REVIEW.format(number=f.number, status=f.state, verb="sent back"))
    return None


def _check_publish(f: _Facts) -> Refusal:
    if not f.has(roles.EDIT):
        return _forbidden()
    if f.status != Status.APPROVED:
        return _not_now(NOT_APPROVED.format(number=f.number, status=f.state))
    approvals, reason = f.counting
    return _blocked(
        f.lint("published")
        or reason
        or f.missing_key(f.user, *(a.reviewer for a in approvals))
    )


def _check_retire(f: _Facts) -> Refusal:
    if not f.has(roles.EDIT):
        return _forbidden()
    if f.status not in (Status.PUBLISHED, *ContractVersion.OPEN_STATUSES):
        return _not_now(CANNOT_RETIRE.format(number=f.number, status=f.state))
    return None


ACTIONS: dict[str, tuple[str, Any]] = {
    SUBMIT: ("Submit for review", _check_submit),
    APPROVE: ("Approve", _check_approve),
    REQUEST_CHANGES: ("Request changes", _check_request_changes),
    PUBLISH: ("Publish", _check_publish),
    WITHDRAW: ("Return to draft to edit", _check_withdraw),
    RETIRE: ("Retire", _check_retire),
}


def _action(facts: _Facts, name: str) -> Action:
    label, check = ACTIONS[name]
    refusal = check(facts)
    if refusal is None:
        return Action(name=name, label=label)
    reason, forbidden, applies = refusal
    return Action(name=name, label=label, reason=reason, forbidden=forbidden, applies=applies)


def available_actions(user: Actor, version: ContractVersion) -> dict[str, Action]:
    """Every transition of `version` as `user` may take it now, by name, in button order.
    The one rule the buttons and the transitions share (Wagtail's `get_actions` shape)."""
    facts = _Facts(user, version)
    return {name: _action(facts, name) for name in ACTIONS}


def _require_action(actor: Actor, version: ContractVersion, name: str) -> _Facts:
    """Refuse, with its reason, an action `available_actions` would not offer; the caller
    holds the locks, so the answer holds until it commits."""
    facts = _Facts(actor, version)
    action = _action(facts, name)
    if not action.allowed:
        raise action.refusal()
    return facts


# --------------------------------------------------------------------------- transitions


@transaction.atomic
def version_submit(
    *, actor: Actor, version: ContractVersion, expected_lock_version: int
) -> ContractVersion:
    """The owner sends a draft for review: its contract is validated and frozen."""
    locked = _lock(version)
    _require(actor, f"contracts.{roles.EDIT}", locked.decision_type)
    _check_lock(locked, expected_lock_version)
    _require_action(actor, locked, SUBMIT)
    contract = compiled_contract(locked)
    before = locked.status
    locked.snapshot = compiler_json(contract)
    locked.sha256 = document_sha256(locked.snapshot)
    locked.status = Status.IN_REVIEW
    # Every form rendered before submission is stale now, so an old editor tab cannot
    # silently pull the version back out of review.
    locked.lock_version += 1
    locked.save(update_fields=["snapshot", "sha256", "status", "lock_version", "updated_at"])
    review = Review.objects.create(
        version=locked,
        submitted_by=actor,
        version_lock=locked.lock_version,
        contract_sha256=locked.sha256,
    )
    audit_record(
        actor=actor,
        action=AuditAction.SUBMITTED,
        summary=f"Submitted version {locked.number} for review",
        version=locked,
        changes={"before": before, "review": review.pk, "sha256": locked.sha256},
    )
    return locked


@transaction.atomic
def version_withdraw(
    *, actor: Actor, version: ContractVersion, expected_lock_version: int | None = None
) -> ContractVersion:
    """The owner takes a version out of review (or back from approved) to edit it."""
    locked = _lock(version)
    _require(actor, f"contracts.{roles.EDIT}", locked.decision_type)
    _check_lock(locked, expected_lock_version)
    _require_action(actor, locked, WITHDRAW)
    return _return_to_draft(actor=actor, version=locked, reason="withdrawn by its owner")


@transaction.atomic
def version_approve(
    *, actor: Actor, version: ContractVersion, report_sha256: str, comment: str = ""
) -> Approval:
    """A reviewer approves exactly the version's current content and the impact report
    they were shown (`report_sha256`); the report is recomputed and must still match."""
    locked = _lock(version)
    _require(actor, f"contracts.{roles.REVIEW}", locked.decision_type)
    _require_action(actor, locked, APPROVE)
    review = _active_review(locked)
    if review is None:  # pragma: no cover - the status says there is one
        raise ValidationError(
            NOT_IN_REVIEW.format(number=locked.number, status=_status(locked), verb="approved")
        )
    report = impact_report(locked)
    if report.sha256 != report_sha256:
        raise ValidationError(REPORT_CHANGED)
    approval = Approval.objects.create(
        review=review,
        version=locked,
        reviewer=actor,
        version_lock=locked.lock_version,
        contract_sha256=locked.sha256,
        report_sha256=report.sha256,
        catalogue_sha256=catalogue_sha256(locked),
        report=report.document,
        comment=comment,
    )
    before = locked.status
    locked.status = Status.APPROVED
    locked.save(update_fields=["status", "updated_at"])
    audit_record(
        actor=actor,
        action=AuditAction.APPROVED,
        summary=f"Approved version {locked.number}" + (f": {comment}" if comment else ""),
        version=locked,
        changes={
            "before": before,
            "approval": approval.pk,
            "report_sha256": report.sha256,
            "sha256": locked.sha256,
            "lock_version": locked.lock_version,
        },
    )
    return approval


@transaction.atomic
def version_request_changes(
    *, actor: Actor, version: ContractVersion, comment: str
) -> ContractVersion:
    """A reviewer sends the version back to its owner, saying why; approvals lapse."""
    locked = _lock(version)
    _require(actor, f"contracts.{roles.REVIEW}", locked.decision_type)
    _require_action(actor, locked, REQUEST_CHANGES)
    comment = (comment or "").strip()
    if not comment:
        raise ValidationError({"comment": COMMENT_REQUIRED})
    now = timezone.now()
    voided = _void_approvals(locked, now=now, reason="changes requested")
    _close_review(locked, actor=actor, outcome=Review.Outcome.CHANGES_REQUESTED, comment=comment)
    before = locked.status
    locked.status = Status.CHANGES_REQUESTED
    locked.save(update_fields=["status", "updated_at"])
    audit_record(
        actor=actor,
        action=AuditAction.CHANGES_REQUESTED,
        summary=f"Requested changes to version {locked.number}: {comment}",
        version=locked,
        changes={"before": before, "comment": comment, "voided_approvals": voided},
    )
    return locked


def _moment(published_at: dt.datetime | None) -> dt.datetime:
    moment = published_at or timezone.now()
    if timezone.is_naive(moment):
        raise ValueError("published_at needs a time zone")
    return moment.astimezone(dt.UTC).replace(microsecond=0)


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

    `_lock` takes the decision type's row first, so publishes of one type run one after the
    other; the bundle chain's constraints (one first bundle per type, one child per bundle)
    would refuse a fork even without the lock. Lint errors and approvals that no longer
    count (`counting_approvals`) refuse it."""
    locked = _lock(version)
    decision_type = locked.decision_type
    _require(actor, f"contracts.{roles.EDIT}", decision_type)
    _check_lock(locked, expected_lock_version)
    _refuse_own_approvals(locked, actor, standing_approvals(locked))
    approvals, _ = _require_action(actor, locked, PUBLISH).counting
    publisher_key = signing.active_key(actor)
    if publisher_key is None:
        raise ValidationError(NO_SIGNING_KEY.format(username=actor.get_username()))
    signers: list[tuple[str, str, Any]] = [
        (actor.get_username(), "publisher", signing.private_key(publisher_key))
    ]
    for approval in approvals:
        key = signing.active_key(approval.reviewer)
        if key is None:
            raise ValidationError(NO_SIGNING_KEY.format(username=approval.reviewer.get_username()))
        signers.append((approval.reviewer.get_username(), "approver", signing.private_key(key)))

    previous = (
        decision_type.versions.select_for_update(of=("self",))
        .filter(status=Status.PUBLISHED)
        .first()
    )
    parent = Bundle.objects.filter(version=previous).first() if previous else None
    moment = _moment(published_at)
    body = bundle_body(
        locked,
        publisher=actor.get_username(),
        approvers=[a.reviewer.get_username() for a in approvals],
        published_at=moment,
        parent_sha256=parent.sha256 if parent else None,
    )
    bundle_document = sign_bundle(body, signers)
    data = serialize_bundle(bundle_document)
    # Belt and braces: what we store must verify against what we publish as trusted keys.
    verify_bundle(data, signing.trusted_public_keys(), key_owners=signing.key_owners())

    if previous is not None:
        previous.status = Status.SUPERSEDED
        previous.save(update_fields=["status", "updated_at"])
        audit_record(
            actor=actor,
            action=AuditAction.SUPERSEDED,
            summary=f"Version {previous.number} superseded by version {locked.number}",
            version=previous,
        )
    locked.status = Status.PUBLISHED
    locked.save(update_fields=["status", "updated_at"])
    bundle = Bundle.objects.create(
        version=locked,
        decision_type=decision_type,
        parent=parent,
        sha256=bundle_document["sha256"],
        content=data,
        published_at=moment,
        publisher=actor,
    )
    _close_review(locked, actor=actor, outcome=Review.Outcome.PUBLISHED)
    audit_record(
        actor=actor,
        action=AuditAction.PUBLISHED,
        summary=f"Published version {locked.number} (bundle {bundle.sha256[:12]}…, approved "
        f"by {', '.join(a.reviewer.get_username() for a in approvals)})",
        version=locked,
        changes={
            "bundle_sha256": bundle.sha256,
            "parent_sha256": parent.sha256 if parent else None,
            "approvers": [a.reviewer.get_username() for a in approvals],
            "key_ids": [s["key_id"] for s in bundle_document["signatures"]],
        },
    )
    return bundle


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


@transaction.atomic
def version_retire(
    *,
    actor: Actor,
    version: ContractVersion,
    reason: str = "",
    expected_lock_version: int | None = None,
) -> ContractVersion:
    """Withdraw a published version from use (no published version remains), or abandon
    a version on its way to publication so another draft can start."""
    locked = _lock(version)
    _require(actor, f"contracts.{roles.EDIT}", locked.decision_type)
    _check_lock(locked, expected_lock_version)
    _require_action(actor, locked, RETIRE)
    before = locked.status
    voided = 0
    if before != Status.PUBLISHED:
        voided = _void_approvals(locked, now=timezone.now(), reason="version retired")
        _close_review(locked, actor=actor, outcome=Review.Outcome.RETIRED)
    locked.status = Status.RETIRED
    locked.save(update_fields=["status", "updated_at"])
    audit_record(
        actor=actor,
        action=AuditAction.RETIRED,
        summary=f"Retired version {locked.number}" + (f": {reason}" if reason else ""),
        version=locked,
        changes={"before": before, "reason": reason, "voided_approvals": voided},
    )
    return locked


# --------------------------------------------------------------------------- bundles


def _manifest_time(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).replace(microsecond=0).isoformat()


def bundle_body(
    version: ContractVersion,
    *,
    publisher: str,
    approvers: Iterable[str],
    published_at: dt.datetime,
    parent_sha256: str | None,
) -> dict[str, Any]:
    """Everything a bundle's hash covers, built from the version's frozen contract, the
    source classes it accepts and the decision type's scenarios with their expectations.
    The manifest names the publisher and approvers (`sign_bundle` adds the key each signs
    with) and every editor (`authors`) with their active key, if any."""
    from scenarios.models import CorpusCandidate, Scenario

    contract = compiled_contract(version).model_dump(mode="json")
    source_classes = bundle_source_classes(contract)
    propositions = {p["key"] for p in contract["propositions"]}
    scenarios = list(
        Scenario.objects.filter(decision_type=version.decision_type)
        .select_related("decision_type", "corpus")
        .order_by("name")
    )
    candidates: dict[int, list[dict[str, Any]]] = {s.corpus_id: [] for s in scenarios}
    rows = CorpusCandidate.objects.filter(corpus_id__in=candidates).order_by("position", "id")
    for corpus_id, data in rows.values_list("corpus_id", "data"):
        candidates[corpus_id].append(data)
    bundle_scenarios = [
        {
            "name": s.name,
            "description": s.description,
            "request": s.request_document(),
            "corpus": {"directory": s.corpus.directory, "candidates": candidates[s.corpus_id]},
            "expected": _expected(s, propositions),
        }
        for s in scenarios
    ]
    return {
        "format": FORMAT,
        "manifest": {
            "decision_type": version.decision_type.key,
            "version": str(version.number),
            "parent_sha256": parent_sha256,
            "author": version.created_by.get_username(),
            "publisher": {"person": publisher},
            "editors": _editors(version),
            "approvers": [{"person": name} for name in sorted(approvers)],
            "published_at": _manifest_time(published_at),
            "compiler_version": COMPILER_VERSION,
        },
        "contract": contract,
        "source_classes": source_classes,
        "scenarios": bundle_scenarios,
    }


def _editors(version: ContractVersion) -> list[dict[str, Any]]:
    editors = get_user_model().objects.filter(pk__in=authors(version)).order_by("username")
    return [
        {"person": user.get_username(), "key_id": key.key_id if key else None}
        for user in editors
        for key in [signing.active_key(user)]
    ]


def _expected(scenario: Any, propositions: set[str]) -> dict[str, Any]:
    """A scenario's expectations in the bundle's shape. Only the contract's propositions can
    be expected of it (a scenario may still name one the version dropped)."""
    return {
        "slots": {k: v for k, v in scenario.expected_slots.items() if k in propositions},
        "admitted": scenario.expected_admitted,
        "rejected": scenario.expected_rejected,
    }


def bundle_bytes(version: ContractVersion) -> bytes:
    """The version's bundle exactly as signed (the same bytes on every export)."""
    bundle = Bundle.objects.filter(version=version).first()
    if bundle is None:
        raise ValidationError(NO_BUNDLE.format(number=version.number))
    return bundle.data


@dataclass(frozen=True)
class Imported:
    bundle: Bundle
    created: bool  # False: the same bundle was already here


@transaction.atomic
def bundle_import(*, actor: Actor | None, data: bytes) -> Imported:
    """Verify a bundle against this workbench's known keys (and their owners) and, only
    if it verifies, record it: the decision type (created if missing), the source classes
    it names that the catalogue lacks, the version — published, its propositions and
    frozen contract from the bundle — superseding the current published version, and the
    bundle's exact bytes. Scenarios stay in the bundle: they are not turned into workbench
    scenarios (the type's own suite is the owners'). `BundleInvalid` or `ValidationError`
    means nothing was written."""
    if actor is not None and not (actor.is_authenticated and actor.is_superuser):
        raise PermissionDenied(NOT_ALLOWED)
    verified = verify_bundle(data, signing.trusted_public_keys(), key_owners=signing.key_owners())
    manifest, contract = verified.manifest, verified.contract
    existing = Bundle.objects.filter(sha256=verified.sha256).select_related("version").first()
    if existing is not None:
        return Imported(bundle=existing, created=False)
    users = get_user_model().objects
    people: dict[str, AbstractBaseUser] = {}
    for username in {manifest.author, manifest.publisher.person, *manifest.approver_names}:
        person = users.filter(username=username).first()
        if person is None:
            raise ValidationError(UNKNOWN_SIGNER.format(username=username))
        people[username] = person

    decision_type = (
        DecisionType.objects.select_for_update().filter(key=manifest.decision_type).first()
    )
    if decision_type is None:
        decision_type = DecisionType.objects.create(
            key=manifest.decision_type,
            title=manifest.decision_type,
            description="Imported from a signed bundle.",
            created_by=people[manifest.publisher.person],
        )
        for perm in roles.ROLE_PERMISSIONS[roles.Role.OWNER]:
            assign_perm(perm, people[manifest.publisher.person], decision_type)
    number = int(manifest.version)
    contract_json = contract.model_dump(mode="json")
    contract_sha = document_sha256(contract_json)
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
    version = decision_type.versions.filter(number=number).first()
    if version is not None:
        raise ValidationError(
            VERSION_EXISTS.format(number=number, key=decision_type.key, status=_status(version))
        )
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
    if previous is not None:
        previous.status = Status.SUPERSEDED
        previous.save(update_fields=["status", "updated_at"])
    policy = contract_json["policy"]
    # Created published: it may coexist with a draft of this workbench's own.
    version = ContractVersion.objects.create(
        decision_type=decision_type,
        number=number,
        status=Status.PUBLISHED,
        parent=previous,
        purposes=list(contract_json["purposes"]),
        policy_name=policy["name"],
        policy_version=policy["version"],
        min_relevance=policy["min_relevance"],
        mandatory_form=policy["mandatory_form"],
        role_order=list(policy["role_order"]),
        on_overrun=policy["on_overrun"],
        snapshot=contract_json,
        sha256=contract_sha,
        created_by=people[manifest.author],
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
        for position, p in enumerate(contract_json["propositions"])
    )
    bundle = Bundle.objects.create(
        version=version,
        decision_type=decision_type,
        parent=current_bundle,
        sha256=verified.sha256,
        content=serialize_bundle(verified),
        published_at=dt.datetime.fromisoformat(manifest.published_at),
        publisher=people[manifest.publisher.person],
        imported=True,
    )
    audit_record(
        actor=actor,
        action=AuditAction.BUNDLE_IMPORTED,
        summary=f"Imported the signed bundle of version {number} ({verified.sha256[:12]}…)",
        version=version,
        changes={
            "bundle_sha256": verified.sha256,
            "publisher": manifest.publisher.person,
            "approvers": list(manifest.approver_names),
            "key_ids": [s.key_id for s in verified.signatures],
        },
    )
    return Imported(bundle=bundle, created=True)


def report_for(version: ContractVersion) -> ImpactReport:
    """The impact report as a reviewer sees it (a selector, re-exported for views)."""
    return impact_report(version)


__all__ = [
    "Action",
    "BundleInvalid",
    "Imported",
    "available_actions",
    "authors",
    "bundle_body",
    "bundle_bytes",
    "bundle_import",
    "may_approve",
    "report_for",
    "standing_approvals",
    "version_approve",
    "version_publish",
    "version_request_changes",
    "version_retire",
    "version_submit",
    "version_withdraw",
]
