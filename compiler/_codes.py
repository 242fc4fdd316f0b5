"""Every state, role, pass name, reason and refusal the compiler can emit.

They are string enums so that they serialise as the plain codes of docs/design.md and compare equal
to those strings in tests and in the workbench.
"""

from __future__ import annotations

from enum import StrEnum


class SlotState(StrEnum):
    SUPPORTED = "supported"
    CONTRADICTED = "contradicted"
    UNKNOWN = "unknown"


class SlotReason(StrEnum):
    ACCEPTED_EVIDENCE = "accepted_evidence"
    SOURCES_DISAGREE = "sources_disagree"
    NO_ADMISSIBLE_EVIDENCE = "no_admissible_evidence"
    EVIDENCE_OVER_BUDGET = "evidence_over_budget"


class OrderRole(StrEnum):
    INSTRUCTION = "instruction"
    TASK = "task"
    STATE = "state"
    EVIDENCE = "evidence"
    SUPPORT = "support"
    TOOL = "tool"


class Requirement(StrEnum):
    MANDATORY = "mandatory"
    REQUIRED = "required"
    PREFERRED = "preferred"
    DISCRETIONARY = "discretionary"


class Pass(StrEnum):
    PARSE = "parse"
    RESOLVE = "resolve"
    TYPE_CHECK = "type-check"
    ADMIT = "admit"
    PLAN = "plan"
    ATTEST = "attest"


class Reason(StrEnum):
    """Why a candidate is not in the packet."""

    NOT_AUTHORISED = "not_authorised"
    NOT_APPLICABLE = "not_applicable"
    WRONG_EVIDENCE_CLASS = "wrong_evidence_class"
    BELOW_MIN_RELEVANCE = "below_min_relevance"
    BUDGET_EXCEEDED = "budget_exceeded"
    NOT_NEEDED_FOR_CONTRACT = "not_needed_for_contract"
    DEPENDENCY_MISSING = "dependency_missing"
    DEPENDENCY_ABSENT = "dependency_absent"


class Detail(StrEnum):
    """The finer cause under `not_authorised` and `not_applicable`."""

    ROLE = "role"
    PURPOSE = "purpose"
    DENIED = "denied"
    ENTITY = "entity"
    NOT_YET_VALID = "not_yet_valid"
    EXPIRED = "expired"
    SUPERSEDED = "superseded"


ALL_ENTITIES = "*"
"""A candidate's `entity` when it applies to every entity of the directory (docs/design.md,
"Pools as retrievers return them"); no request can be about it."""


class RefusalReason(StrEnum):
    ENTITY_UNRESOLVED = "entity_unresolved"
    ENTITY_AMBIGUOUS = "entity_ambiguous"
    DELEGATION_INVALID = "delegation_invalid"
    DECISION_TYPE_MISMATCH = "decision_type_mismatch"
    PURPOSE_NOT_PERMITTED = "purpose_not_permitted"
    MANDATORY_OVER_BUDGET = "mandatory_over_budget"
    REQUIRED_GROUP_UNSATISFIED = "required_group_unsatisfied"
    NAMED_NOT_ADMISSIBLE = "named_not_admissible"
    INVARIANT_VIOLATED = "invariant_violated"


class Outcome(StrEnum):
    """What a pass decided about one candidate (or, with no id, about the request)."""

    RESOLVED = "resolved"
    CHECKED = "checked"
    ADMITTED = "admitted"
    REJECTED = "rejected"
    SELECTED = "selected"
    DROPPED = "dropped"
    REFUSED = "refused"
    ATTESTED = "attested"


class Result(StrEnum):
    COMPILED = "compiled"
    REFUSED = "refused"
    INVALID = "invalid"


AUTHORITY_TIERS = {
    "system_of_record": 1,
    "approved_instrument": 2,
    "controlled_document": 3,
    "informal": 4,
}
"""The catalogue's authority tiers by name; 1 is the most authoritative."""


def authority_tier(value: int | str) -> int:
    """A class's authority tier as a number: 1..4, or its name (`AUTHORITY_TIERS`)."""
    if isinstance(value, bool) or value not in (*AUTHORITY_TIERS.values(), *AUTHORITY_TIERS):
        names = ", ".join(AUTHORITY_TIERS)
        raise ValueError(f"authority_tier must be 1 to 4 or one of {names}, not {value!r}")
    return AUTHORITY_TIERS[value] if isinstance(value, str) else value
