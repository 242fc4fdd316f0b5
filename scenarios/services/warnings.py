"""Values the compiler accepts but this workbench does not know: saved, and reported as
located warnings (or, with `strict`, refused as problems)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scenarios import compiling, selectors
from scenarios.models import Scenario

UNKNOWN_CLASS = (
    "'{value}' is not in the source-class catalogue: check the spelling, or add the class."
)
RETIRED_CLASS = "'{value}' is a retired source class: no system produces it any more."
UNKNOWN_PROPOSITION = "'{value}' is not a proposition of any version of this decision type."
UNKNOWN_ID = "{field}: '{value}' is not a candidate of corpus '{corpus}'."


def candidate_warnings(
    known: selectors.KnownValues, data: Mapping[str, Any], *, index: int | None = None
) -> list[compiling.CorpusProblem]:
    """What in one candidate (the compiler's JSON) the catalogue and contract do not know."""
    prefix: tuple[str | int, ...] = ("candidates", index) if index is not None else ()
    found = []
    candidate_id = data.get("id") if isinstance(data.get("id"), str) else None

    def warn(loc: tuple[str | int, ...], message: str, value: str) -> None:
        found.append(
            compiling.CorpusProblem(
                loc=(*prefix, *loc), msg=message.format(value=value), candidate_id=candidate_id
            )
        )

    # `data` may be a candidate that did not validate: a value of the wrong type is its own
    # problem, not a warning.
    value = data.get("evidence_class")
    if not isinstance(value, str) or not value:
        pass
    elif value in known.retired_classes:
        warn(("evidence_class",), RETIRED_CLASS, value)
    elif value not in known.evidence_classes:
        warn(("evidence_class",), UNKNOWN_CLASS, value)
    if known.has_contract:
        for field in ("supports", "contradicts"):
            keys = data.get(field, ())
            for position, key in enumerate(keys if isinstance(keys, list | tuple) else ()):
                if isinstance(key, str) and key not in known.propositions:
                    warn((field, position), UNKNOWN_PROPOSITION, key)
    return found


def scenario_warnings(scenario: Scenario) -> list[str]:
    """Ids the scenario names or expects that its corpus does not hold (a typo, or a
    candidate renamed since): such an expectation can never be met."""
    ids = set(scenario.corpus.candidates.values_list("candidate_id", flat=True))
    named = [
        (field, value)
        for field in ("named", "expected_admitted", "expected_rejected")
        for value in getattr(scenario, field) or ()
    ]
    named += [
        (f"expected_resource_ids of '{key}'", value)
        for key, values in (scenario.expected_resource_ids or {}).items()
        for value in values
    ]
    return [
        UNKNOWN_ID.format(field=field, value=value, corpus=scenario.corpus.name)
        for field, value in named
        if value not in ids
    ]
