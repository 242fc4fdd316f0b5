"""What a person may do with a version now: one `Action` per transition, decided in one
place. The transitions refuse exactly what `available_actions` refuses, and the pages show
exactly the buttons it allows (Wagtail's `get_actions` shape).

Each rule is a row of `ACTIONS`: the button's label, the role permission it needs (without
it the action is forbidden: 403 and no button) and the check of the version's state."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError

from contracts import lint, roles
from contracts.documents import ContractInvalid, compiled_contract
from contracts.models import Approval, ContractVersion
from contracts.services import NOT_ALLOWED, Actor
from publishing import signing
from publishing.impact import REPORT_PENDING

from .justifications import unjustified_refusal
from .messages import (
    ALREADY_APPROVED,
    CANNOT_RETIRE,
    CANNOT_SUBMIT,
    CANNOT_WITHDRAW,
    INVALID_CONTRACT,
    LINT_ERRORS,
    NO_SIGNING_KEY,
    NOT_APPROVED,
    NOT_IN_REVIEW,
    OWN_VERSION,
)
from .selectors import authors, counting_approvals, report_for, status_word, version_lint

Status = ContractVersion.Status

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


class Facts:
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
        return status_word(self.version)

    @cached_property
    def lint_errors(self) -> str:
        return " ".join(f.message for f in lint.errors(version_lint(self.version)))

    def lint(self, verb: str) -> str:
        if not self.lint_errors:
            return ""
        return LINT_ERRORS.format(number=self.number, verb=verb, errors=self.lint_errors)

    @cached_property
    def counting(self) -> tuple[list[Approval], str]:
        return counting_approvals(self.version)

    def unjustified(self, verb: str) -> str:
        """The violations of the impact report no owner has justified, as a refusal. The report
        is computed in the background: a draft whose report is not ready yet may still be
        submitted (its violations then block approving and publishing, which need the report);
        publishing waits for it."""
        report = report_for(self.version)
        if report is None:
            return "" if verb == "submitted" else REPORT_PENDING.format(number=self.number)
        return unjustified_refusal(self.version, report, verb)

    def missing_key(self, *people: Any) -> str:
        for person in people:
            if signing.signing_key(person) is None:  # none, legacy or revoked
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


def _check_submit(f: Facts) -> Refusal:
    if not f.version.is_editable:
        return _not_now(CANNOT_SUBMIT.format(number=f.number, status=f.state))
    try:
        compiled_contract(f.version)
    except ContractInvalid as exc:
        return _blocked(INVALID_CONTRACT.format(number=f.number, problems=str(exc)))
    return _blocked(f.lint("submitted") or f.unjustified("submitted"))


def _check_withdraw(f: Facts) -> Refusal:
    if f.status not in REVIEWABLE:
        return _not_now(CANNOT_WITHDRAW.format(number=f.number, status=f.state))
    return None


def _check_approve(f: Facts) -> Refusal:
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


def _check_request_changes(f: Facts) -> Refusal:
    if f.status not in REVIEWABLE:
        return _not_now(NOT_IN_REVIEW.format(number=f.number, status=f.state, verb="sent back"))
    return None


def _check_publish(f: Facts) -> Refusal:
    if f.status != Status.APPROVED:
        return _not_now(NOT_APPROVED.format(number=f.number, status=f.state))
    approvals, reason = f.counting
    return _blocked(
        f.lint("published")
        or f.unjustified("published")
        or reason
        or f.missing_key(f.user, *(a.reviewer for a in approvals))
    )


def _check_retire(f: Facts) -> Refusal:
    if f.status not in (Status.PUBLISHED, *ContractVersion.OPEN_STATUSES):
        return _not_now(CANNOT_RETIRE.format(number=f.number, status=f.state))
    return None


@dataclass(frozen=True)
class Rule:
    label: str
    permission: str  # the role permission on the decision type (`contracts.roles`)
    check: Callable[[Facts], Refusal]


# In button order.
ACTIONS: dict[str, Rule] = {
    SUBMIT: Rule("Submit for review", roles.EDIT, _check_submit),
    APPROVE: Rule("Approve", roles.REVIEW, _check_approve),
    REQUEST_CHANGES: Rule("Request changes", roles.REVIEW, _check_request_changes),
    PUBLISH: Rule("Publish", roles.EDIT, _check_publish),
    WITHDRAW: Rule("Return to draft to edit", roles.EDIT, _check_withdraw),
    RETIRE: Rule("Retire", roles.EDIT, _check_retire),
}


def permitted(user: Actor, version: ContractVersion, name: str) -> bool:
    """Whether `user` holds the role the action needs on the version's decision type: the
    first question, asked before any form is read or any state is checked."""
    return Facts(user, version).has(ACTIONS[name].permission)


def action(facts: Facts, name: str) -> Action:
    rule = ACTIONS[name]
    refusal = rule.check(facts) if facts.has(rule.permission) else _forbidden()
    if refusal is None:
        return Action(name=name, label=rule.label)
    reason, forbidden, applies = refusal
    return Action(name=name, label=rule.label, reason=reason, forbidden=forbidden, applies=applies)


def available_actions(user: Actor, version: ContractVersion) -> dict[str, Action]:
    """Every transition of `version` as `user` may take it now, by name, in button order.
    The one rule the buttons and the transitions share (Wagtail's `get_actions` shape)."""
    facts = Facts(user, version)
    return {name: action(facts, name) for name in ACTIONS}


def may_approve(user: Actor, version: ContractVersion) -> bool:
    """The approve button's rule (see `available_actions`)."""
    return available_actions(user, version)[APPROVE].allowed
