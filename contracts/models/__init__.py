"""Source classes, decision types, contract versions, their propositions and the audit log.

A contract version's editable draft lives in rows (the version's policy fields and its
`Proposition` rows); `contracts.documents` turns those rows into the compiler's `Contract`
document, the only place that shape is built. A version also keeps `snapshot`/`sha256`: the
last valid document built from its rows, which becomes the frozen content once a version
leaves the editable states (review and publishing build on that).
"""

from __future__ import annotations

from .audit import (  # noqa: F401
    EDIT_ACTIONS,
    AuditAction,
    AuditEvent,
    AuditQuerySet,
)
from .catalogue import (  # noqa: F401
    DEFAULT_ROLE_ORDER,
    DOTTED_KEY_HELP,
    DOTTED_KEY_PATTERN,
    KEY_HELP,
    KEY_PATTERN,
    SOURCE_CLASS_FIELDS,
    CatalogueFieldValues,
    SourceClass,
    SourceClassProposal,
    default_role_order,
    dotted_key_validator,
    key_validator,
    source_class_changes,
)
from .impact import (  # noqa: F401
    ImpactReportChunk,
    ImpactReportHead,
    ImpactScenarioEntry,
    StoredImpactReport,
)
from .review import (  # noqa: F401
    BUNDLE_IMMUTABLE,
    Approval,
    ApprovalQuerySet,
    Bundle,
    BundleQuerySet,
    BundleTestSuite,
    Review,
    SigningKey,
    ViolationJustification,
)
from .versions import (  # noqa: F401
    FROZEN_MOVES,
    FROZEN_VERSION_STATUSES,
    OPEN_VERSION_STATUSES,
    VERSION_FROZEN,
    ContractVersion,
    ContractVersionQuerySet,
    DecisionType,
    Proposition,
    PropositionQuerySet,
    VersionFrozen,
    _frozen_version_of,
    _refuse_frozen,
)
