"""A scenario's expectations as the compiler's expectation document (docs/scenarios.md,
"Expectations"), and back: the one table that maps the document's keys to the scenario's
fields. Suite strength hands the document to the mutation engine with each scenario, and
pins a proposed scenario's document onto the fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .models import Scenario

# The expectation document's key -> the Scenario field that holds it.
PINNED_FIELDS: dict[str, str] = {
    "slots": "expected_slots",
    "admitted": "expected_admitted",
    "rejected": "expected_rejected",
}


def expected_document(scenario: Scenario) -> dict[str, Any]:
    """What the scenario pins, as the compiler's expectation document (None: not checked)."""
    return {key: getattr(scenario, field) for key, field in PINNED_FIELDS.items()}


def pinned_fields(expected: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The scenario fields that pin `expected`, and the keys it states that no field of a
    scenario can hold (left unpinned)."""
    fields = {
        field: expected[key]
        for key, field in PINNED_FIELDS.items()
        if expected.get(key) is not None
    }
    unpinned = sorted(
        key for key, value in expected.items() if key not in PINNED_FIELDS and value is not None
    )
    return fields, unpinned
