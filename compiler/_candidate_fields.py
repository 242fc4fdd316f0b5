"""A candidate's fields, once: their order, which are required, what an absent one is, and
the JSON types each takes.

The validated model (`compiler._input.Candidate`) declares them with pydantic's types; the
slotted twin a compile without pydantic reads (`compiler._slotted.PlainCandidate`) takes its
slots from here, and its reader (`compiler._field_checks`) its defaults and type checks;
tests/compiler/test_compiler_plain_path.py holds the model to this table.
"""

from __future__ import annotations

from typing import Any, NamedTuple


class Required:
    """The default of a field every candidate must give."""

    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = Required()
NO_ITEMS: tuple[str, ...] = ()


class CandidateField(NamedTuple):
    default: Any
    """What an absent field is (`REQUIRED` when it may not be absent), as the model has it."""
    json_types: frozenset[type]
    """The JSON types the field takes, strictly (no bool for an int)."""


def _field(default: Any, *json_types: type) -> CandidateField:
    return CandidateField(default, frozenset(json_types))


CANDIDATE_FIELDS: dict[str, CandidateField] = {
    "id": _field(REQUIRED, str),
    "entity": _field(REQUIRED, str),
    "allowed_roles": _field(REQUIRED, list),
    "allowed_purposes": _field(REQUIRED, list),
    "denied_roles": _field(NO_ITEMS, list),
    "denied_principals": _field(NO_ITEMS, list),
    "evidence_class": _field(REQUIRED, str),
    "supports": _field(REQUIRED, list),
    "contradicts": _field(NO_ITEMS, list),
    "valid_from": _field(REQUIRED, str),
    "valid_to": _field(None, str, type(None)),
    "superseded": _field(False, bool),
    "superseded_by": _field(None, str, type(None)),
    "tokens": _field(REQUIRED, int),
    "relevance": _field(REQUIRED, int, float),
    "content": _field(REQUIRED, str),
    "role": _field("evidence", str),
    "requirement": _field("preferred", str),
    "forms": _field(NO_ITEMS, list),
    "floor": _field(None, int, type(None)),
    "depends_on": _field(NO_ITEMS, list),
    "group": _field(None, str, type(None)),
    "group_required": _field(False, bool),
    "source": _field(None, dict, type(None)),
}
