"""Every write to the contracts app. Views, management commands and tests call these.

Each service takes keyword-only arguments, checks the actor's permission, locks what it is
about to change, changes it, writes one `AuditEvent` and returns the changed object — all in
one transaction. Problems a person can fix are raised as `ValidationError` (keyed by field
where there is one) with the messages below; a stale edit raises `EditConflict`.

One module per concern, re-exported here so callers import `contracts.services`:

- `checks`: `Actor`, `EditConflict`, `check_lock` (the optimistic-lock comparison every edit
  makes), the permission and validation checks;
- `audit`: `audit_record`, the audit log's one writer;
- `catalogue`: source classes and proposals to change them;
- `decision_types`: decision types and who holds which role on one;
- `drafts`: the lock every draft edit takes (`_lock_draft`), returning a version to draft,
  starting a draft, a draft's settings;
- `propositions`: a draft's propositions and their accepted classes.
"""

from __future__ import annotations

from .audit import audit_record
from .catalogue import (
    CATALOGUE_MANAGERS_ONLY,
    DUPLICATE_SOURCE_CLASS,
    NO_CATALOGUE_CHANGE,
    PROPOSAL_DECIDED,
    PROPOSERS_ONLY,
    REJECTION_NEEDS_NOTE,
    STALE_PROPOSAL,
    STALE_SOURCE_CLASS,
    source_class_create,
    source_class_proposal_accept,
    source_class_proposal_reject,
    source_class_propose,
    source_class_update,
)
from .checks import NOT_ALLOWED, STALE_EDIT, Actor, EditConflict, _require, check_lock
from .decision_types import (
    DUPLICATE_DECISION_TYPE,
    KEY_UNAVAILABLE,
    LAST_OWNER,
    NO_ROLE,
    access_grant,
    access_revoke,
    access_set_by_provider,
    decision_type_create,
)
from .drafts import (
    BAD_ROLE_ORDER,
    NOT_EDITABLE,
    OPEN_VERSION_EXISTS,
    _bump,
    _lock_draft,
    approvals_void,
    version_return_to_draft,
    version_start_draft,
    version_update_settings,
)
from .propositions import (
    BAD_DIRECTION,
    CLASS_ALREADY_ACCEPTED,
    CLASS_NOT_ACCEPTED,
    DIRECTIONS,
    DUPLICATE_PROPOSITION,
    RETIRED_CLASS,
    UNKNOWN_CLASS,
    accepted_class_add,
    accepted_class_move,
    accepted_class_remove,
    proposition_add,
    proposition_delete,
    proposition_move,
    proposition_update,
)

__all__ = [
    "BAD_DIRECTION",
    "BAD_ROLE_ORDER",
    "CATALOGUE_MANAGERS_ONLY",
    "CLASS_ALREADY_ACCEPTED",
    "CLASS_NOT_ACCEPTED",
    "DIRECTIONS",
    "DUPLICATE_DECISION_TYPE",
    "DUPLICATE_PROPOSITION",
    "DUPLICATE_SOURCE_CLASS",
    "KEY_UNAVAILABLE",
    "LAST_OWNER",
    "NOT_ALLOWED",
    "NOT_EDITABLE",
    "NO_CATALOGUE_CHANGE",
    "NO_ROLE",
    "OPEN_VERSION_EXISTS",
    "PROPOSAL_DECIDED",
    "PROPOSERS_ONLY",
    "REJECTION_NEEDS_NOTE",
    "RETIRED_CLASS",
    "STALE_EDIT",
    "STALE_PROPOSAL",
    "STALE_SOURCE_CLASS",
    "UNKNOWN_CLASS",
    "Actor",
    "EditConflict",
    "_bump",
    "_lock_draft",
    "_require",
    "access_grant",
    "access_revoke",
    "access_set_by_provider",
    "accepted_class_add",
    "accepted_class_move",
    "accepted_class_remove",
    "approvals_void",
    "audit_record",
    "check_lock",
    "decision_type_create",
    "proposition_add",
    "proposition_delete",
    "proposition_move",
    "proposition_update",
    "source_class_create",
    "source_class_proposal_accept",
    "source_class_proposal_reject",
    "source_class_propose",
    "source_class_update",
    "version_return_to_draft",
    "version_start_draft",
    "version_update_settings",
]
