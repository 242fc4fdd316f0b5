"""The messages a person reads when a transition or an import refuses (tests assert on them)."""

from __future__ import annotations

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
    "{username} has no signing key of their own (a key registered from a browser or a key "
    "file, not legacy or revoked); register one on the Signing keys page first."
)
COMMENT_REQUIRED = "Say what needs to change."
NOT_APPROVED = "Version {number} is {status}; only an approved version can be published."
NO_STANDING_APPROVAL = (
    "Version {number} has no approval of its current content; it must be reviewed again."
)
APPROVERS_NO_LONGER_REVIEW = (
    "Version {number} was approved only by people who no longer review '{key}' ({people}): "
    "the key set lets a key approve only the types its owner reviews, so a bundle with their "
    "approval would not verify. Someone who reviews '{key}' now must approve it."
)
REPORT_CHANGED_SINCE_APPROVAL = (
    "The impact report of version {number} changed after it was approved (a scenario, its "
    "expectations or a corpus moved on), and the bundle would carry what no reviewer saw. "
    "Return it to draft and submit it again, so that it is approved as it is now."
)
BUNDLE_TESTS_FAIL = (
    "Version {number}'s bundle carries {count} whose expectations do not hold for it: "
    "{failures}. Update their expectations (Take the current result as expected on each "
    "scenario's page, or the contract tests exported for version {number}) before "
    "publishing: a bundle's tests must hold for the version it ships."
)
BUNDLE_TESTS_INVALID = (
    "Version {number}'s bundle carries scenarios that cannot be compiled against it: "
    "{problems}. Fix them before publishing."
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
NO_TEST_SUITE = (
    "Version {number} has no test suite here: it was never published, its bundle (format 2) "
    "carries its scenarios itself, it had no scenarios, or it was imported without its suite."
)
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
UNJUSTIFIED_VIOLATIONS = (
    "Version {number} cannot be {verb} while {count} cause(s) of violations have no "
    "justification: {violations}. An owner records why each cause is acceptable on the impact "
    "report (one justification covers every scenario it touches), or changes the contract."
)
WIDENINGS_NOT_ACKNOWLEDGED = (
    "Approving version {number} needs each widening acknowledged: the version accepts or "
    "admits more than the published one did. Not acknowledged: {items}."
)
NOT_A_VIOLATION = (
    "The impact report of version {number} has no violation of the cause {operator}, "
    "{proposition}{cause}: nothing to justify."
)
JUSTIFICATION_REQUIRED = "Say why the violations of this cause are acceptable."
CANNOT_JUSTIFY = (
    "Version {number} is {status}; justifications are recorded on a draft (or one sent back), "
    "before it is submitted."
)
NOT_SIGNED = (
    "An approval is signed by its reviewer: register a signing key (Signing keys page) and "
    "sign the approval statement in your browser, or with evidence-compiler sign-approval."
)
STATEMENT_REFUSED = "The signed statement is refused: {reason}"
STATEMENT_STALE = (
    "The signed statement is not for version {number} as it is now ({what}); reload the page "
    "and sign again."
)
UNSIGNED_APPROVAL = (
    "{username}'s approval of version {number} was recorded before approvals were signed by "
    "their reviewers; it cannot go into a bundle. Ask them to approve again."
)
