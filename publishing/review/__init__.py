"""The review and publishing of a contract version, and bundle import: one module per concern.

    draft ──submit──▶ in review ──approve──▶ approved ──publish──▶ published ──▶ superseded
      ▲                  │  ▲                   │                     │
      └─ edit/withdraw ──┘  └── more approvals ─┘                     └──retire──▶ retired
      ▲                  │
      └── edit ── changes requested ◀── request changes (from in review or approved)

* `actions` — what a person may do with a version now (`available_actions`): the one rule
  the transitions, the views and the templates consult;
* `steps` — what every transition does first: lock the rows, check the person, their page's
  lock version and the action's rule; close a review;
* `transitions` — submit, withdraw, approve, request changes, retire (one function each);
* `publish` — publishing: check, lock, build, check the publisher's statement, assemble, store;
* `statements` — the statements people sign on their side, and checking what they signed;
* `bundles` — the bundle's body and stored bytes; `catalogue` — the catalogue entries it
  carries and their hash; `importing` — verifying and recording a bundle from elsewhere;
* `selectors` — who edited a version, which approvals count, the status and warnings shown;
* `messages` — the refusals a person reads (tests assert on them).

Import from here (`from publishing import review`; `review.version_publish(...)`): this
package re-exports the public names of its modules.

The transitions live in `publishing` rather than in `contracts.services` because they depend
on the scenarios app (the impact report compiles the type's scenarios; the bundle names
them in its test suite) and on signing, while `contracts.services` is imported by the
scenarios app itself. The editing side of the four-eyes rule (an edit returns the version
to draft and voids its approvals) lives in `contracts.services._lock_draft`, which every
edit already goes through.
"""

from __future__ import annotations

from compiler_trust import BundleInvalid
from publishing.impact import (
    REPORT_FAILED,
    REPORT_PENDING,
    report_ensure,
    report_retry,
    report_state,
    stored_report,
)

from .actions import (
    ACTIONS,
    APPROVE,
    PUBLISH,
    REQUEST_CHANGES,
    RETIRE,
    SUBMIT,
    WITHDRAW,
    Action,
    available_actions,
    may_approve,
    permitted,
)
from .bundles import (
    BundleParts,
    bundle_bytes,
    bundle_parts,
    suite_bytes,
)
from .catalogue import (
    bundle_source_classes,
    catalogue_sha256,
)
from .importing import (
    Imported,
    bundle_import,
)
from .justifications import (
    acknowledged_widenings,
    unjustified_violations,
    violation_justify,
)
from .messages import (
    ALREADY_APPROVED,
    APPROVAL_OUT_OF_DATE,
    APPROVER_IS_EDITOR,
    APPROVER_IS_PUBLISHER,
    APPROVERS_NO_LONGER_REVIEW,
    CANNOT_JUSTIFY,
    CANNOT_RETIRE,
    CANNOT_SUBMIT,
    CANNOT_WITHDRAW,
    CATALOGUE_CHANGED_SINCE_APPROVAL,
    COMMENT_REQUIRED,
    INVALID_CONTRACT,
    JUSTIFICATION_REQUIRED,
    LINT_ERRORS,
    NO_BUNDLE,
    NO_SCENARIO,
    NO_SIGNING_KEY,
    NO_STANDING_APPROVAL,
    NOT_A_VIOLATION,
    NOT_APPROVED,
    NOT_IN_REVIEW,
    NOT_SIGNED,
    OWN_VERSION,
    REPORT_CHANGED,
    REPORT_CHANGED_SINCE_APPROVAL,
    STATEMENT_REFUSED,
    STATEMENT_STALE,
    UNJUSTIFIED_VIOLATIONS,
    UNKNOWN_SIGNER,
    UNSIGNED_APPROVAL,
    VERSION_EXISTS,
    WIDENINGS_NOT_ACKNOWLEDGED,
    WRONG_PARENT,
)
from .publish import (
    PublicationDraft,
    publication_draft,
    version_publish,
)
from .selectors import (
    authors,
    bundles_by_version,
    counting_approvals,
    open_review,
    report_for,
    review_warnings,
    shown_status,
    standing_approvals,
    version_approvals,
    version_bundle,
)
from .statements import (
    approval_statement,
    checked_statement,
    personal_key,
    publication_statement,
    statement_base64,
)
from .transitions import (
    version_approve,
    version_request_changes,
    version_retire,
    version_submit,
    version_withdraw,
)

__all__ = [
    "CANNOT_JUSTIFY",
    "JUSTIFICATION_REQUIRED",
    "NOT_A_VIOLATION",
    "UNJUSTIFIED_VIOLATIONS",
    "WIDENINGS_NOT_ACKNOWLEDGED",
    "acknowledged_widenings",
    "unjustified_violations",
    "violation_justify",
    "ACTIONS",
    "ALREADY_APPROVED",
    "APPROVAL_OUT_OF_DATE",
    "APPROVE",
    "APPROVER_IS_EDITOR",
    "APPROVER_IS_PUBLISHER",
    "APPROVERS_NO_LONGER_REVIEW",
    "Action",
    "BundleInvalid",
    "CANNOT_RETIRE",
    "CANNOT_SUBMIT",
    "CANNOT_WITHDRAW",
    "CATALOGUE_CHANGED_SINCE_APPROVAL",
    "COMMENT_REQUIRED",
    "INVALID_CONTRACT",
    "Imported",
    "LINT_ERRORS",
    "NOT_APPROVED",
    "NOT_IN_REVIEW",
    "NO_BUNDLE",
    "NO_SCENARIO",
    "NO_SIGNING_KEY",
    "NOT_SIGNED",
    "STATEMENT_REFUSED",
    "STATEMENT_STALE",
    "UNSIGNED_APPROVAL",
    "PublicationDraft",
    "approval_statement",
    "checked_statement",
    "personal_key",
    "publication_draft",
    "publication_statement",
    "statement_base64",
    "NO_STANDING_APPROVAL",
    "OWN_VERSION",
    "PUBLISH",
    "REPORT_CHANGED",
    "REPORT_CHANGED_SINCE_APPROVAL",
    "REQUEST_CHANGES",
    "RETIRE",
    "SUBMIT",
    "UNKNOWN_SIGNER",
    "VERSION_EXISTS",
    "WITHDRAW",
    "WRONG_PARENT",
    "authors",
    "available_actions",
    "BundleParts",
    "bundle_bytes",
    "bundle_parts",
    "suite_bytes",
    "bundle_import",
    "bundle_source_classes",
    "bundles_by_version",
    "catalogue_sha256",
    "counting_approvals",
    "may_approve",
    "open_review",
    "permitted",
    "report_for",
    "report_ensure",
    "REPORT_PENDING",
    "REPORT_FAILED",
    "report_retry",
    "report_state",
    "stored_report",
    "review_warnings",
    "shown_status",
    "standing_approvals",
    "version_approvals",
    "version_approve",
    "version_bundle",
    "version_publish",
    "version_request_changes",
    "version_retire",
    "version_submit",
    "version_withdraw",
]
