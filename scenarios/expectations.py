"""A scenario's expectations as one document, the pins on the output's meaning, and a failed
expectation in plain words.

The document is the `expected:` mapping of a contract-test file (`compiler_tools._contract_tests`),
which `compiler.output_failures` checks a compile against:

    slots          {proposition: state}           the scenario's `expected_slots`
    admitted       [ids] (exact set) or absent    `expected_admitted`
    rejected       [ids] (exact set) or absent    `expected_rejected`
    decision_ready true | false or absent         `expected_decision_ready`
    blocking       [propositions] (exact set)     `expected_blocking`
    required       {proposition: true | false}    `expected_required`
    resource_ids   {proposition: [ids] in order}  `expected_resource_ids`

A key left out (a null field, an empty mapping) is not checked. `expected_document` builds the
document from a scenario's fields and `scenario_fields` the other way (a file's `expected:`);
`clean_pins` checks and normalises the last four, naming the field, the proposition and what
is wrong; `failure_text` and `failure_html` say a failure row (the checker's, or one a run
stored before the pins existed) in plain words, the HTML with every name in `<bdi>`.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from django.core.exceptions import ValidationError
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

# Scenario field -> the document's key, in the document's order.
DOCUMENT_KEYS: dict[str, str] = {
    "expected_slots": "slots",
    "expected_admitted": "admitted",
    "expected_rejected": "rejected",
    "expected_decision_ready": "decision_ready",
    "expected_blocking": "blocking",
    "expected_required": "required",
    "expected_resource_ids": "resource_ids",
}
PIN_FIELDS = (
    "expected_decision_ready",
    "expected_blocking",
    "expected_required",
    "expected_resource_ids",
)
# Mappings whose empty value means "not checked" (the others are null then).
_MAPPINGS = ("expected_slots", "expected_required", "expected_resource_ids")

# Messages tests assert on. `{where}` names the field (and the proposition, when there is one).
NOT_A_BOOLEAN = "{where}: give true, false or nothing (not checked), not {value}."
NOT_A_FLAG = "{where}: give true (required) or false (optional), not {value}."
NOT_A_LIST = "{where}: give a list of {items}, not {value}."
NOT_A_MAPPING = "{where}: give a mapping from each proposition to {what}, not {value}."
NOT_A_NAME = "{where}: {value} is not a {item}: give its key as text."
BLANK = "{where}: an empty {item}."
DUPLICATE = "{where}: '{value}' is listed twice."
UNKNOWN_PROPOSITION = (
    "{where}: '{value}' is not a proposition of any version of this decision type."
)

LABELS = {
    "expected_decision_ready": "Decision ready",
    "expected_blocking": "Blocking propositions",
    "expected_required": "Required",
    "expected_resource_ids": "Resource ids",
}


def expected_document(scenario: Any) -> dict[str, Any]:
    """What the scenario checks, as the `expected:` mapping (only what it checks; `slots`
    always)."""
    return document_from_fields({field: getattr(scenario, field) for field in DOCUMENT_KEYS})


def document_from_fields(fields: Mapping[str, Any]) -> dict[str, Any]:
    """Scenario field values as the document, what is not checked left out."""
    document: dict[str, Any] = {}
    for field, key in DOCUMENT_KEYS.items():
        value = fields.get(field)
        if field == "expected_slots":
            document[key] = dict(value or {})
        elif field in _MAPPINGS:
            if value:
                document[key] = {k: _copy(v) for k, v in value.items()}
        elif value is not None:
            document[key] = _copy(value)
    return document


def scenario_fields(document: Mapping[str, Any]) -> dict[str, Any]:
    """A document's keys as the scenario's field values (absent: not checked)."""
    fields: dict[str, Any] = {}
    for field, key in DOCUMENT_KEYS.items():
        value = document.get(key)
        fields[field] = ({} if value is None else value) if field in _MAPPINGS else value
    return fields


def normalised(document: Mapping[str, Any]) -> dict[str, Any]:
    """A document (a file's `expected:`) as `expected_document` writes it: what is not
    checked left out, so the two compare equal when they check the same."""
    return document_from_fields(scenario_fields(document))


def _copy(value: Any) -> Any:
    return list(value) if isinstance(value, list | tuple) else value


def taken(scenario: Any, result: Mapping[str, Any]) -> dict[str, Any]:
    """The scenario's expectations once a compile's (`compiling.expectations_from`) are
    taken as expected: every slot state; each other check only where the scenario already
    makes it (an id set, decision_ready, the blocking set, a slot's `required` or resource
    ids), so taking a result never adds a check nobody asked for. A check `result` does not
    speak of is kept as it is."""
    after: dict[str, Any] = {"expected_slots": dict(result["expected_slots"])}
    for field in ("expected_admitted", "expected_rejected", "expected_decision_ready",
                  "expected_blocking"):  # fmt: skip
        current = getattr(scenario, field)
        after[field] = current if current is None else _copy(result.get(field, current))
    for field in ("expected_required", "expected_resource_ids"):
        current, now = getattr(scenario, field) or {}, result.get(field)
        after[field] = (
            dict(current) if now is None else {k: _copy(now[k]) for k in current if k in now}
        )
    return after


# --------------------------------------------------------------------------- validation


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "…"


def clean_pins(fields: dict[str, Any], propositions: Collection[str] | None) -> dict[str, Any]:
    """Check and normalise the four pins among `fields` (scenario field names) in place, and
    return `fields`. `propositions`: every proposition of every version of the decision type,
    or None when it has no version yet (then any key is taken). `ValidationError` maps the
    field to a message saying where (field, proposition) and what is wrong."""
    fields["expected_decision_ready"] = _decision_ready(fields.get("expected_decision_ready"))
    fields["expected_blocking"] = _blocking(fields.get("expected_blocking"), propositions)
    fields["expected_required"] = _per_proposition(
        "expected_required", fields.get("expected_required"), propositions, _required_flag,
        "true (required) or false (optional)",
    )  # fmt: skip
    fields["expected_resource_ids"] = _per_proposition(
        "expected_resource_ids", fields.get("expected_resource_ids"), propositions, _resource_ids,
        "the list of its resource ids, in order",
    )  # fmt: skip
    return fields


def _refuse(field: str, message: str, **values: Any) -> ValidationError:
    return ValidationError({field: message.format(**values)})


def _decision_ready(value: Any) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    where = LABELS["expected_decision_ready"]
    raise _refuse("expected_decision_ready", NOT_A_BOOLEAN, where=where, value=_shown(value))


def _blocking(value: Any, propositions: Collection[str] | None) -> list[str] | None:
    if value is None:
        return None
    field, where = "expected_blocking", LABELS["expected_blocking"]
    if not isinstance(value, list | tuple):
        raise _refuse(field, NOT_A_LIST, where=where, items="proposition keys", value=_shown(value))
    return _names(field, where, value, "proposition key", propositions)


def _names(
    field: str,
    where: str,
    values: Sequence[Any],
    item: str,
    propositions: Collection[str] | None = None,
) -> list[str]:
    """Non-empty texts, each once; each a known proposition when `propositions` is given."""
    seen: list[str] = []
    for value in values:
        if not isinstance(value, str):
            raise _refuse(field, NOT_A_NAME, where=where, value=_shown(value), item=item)
        if not value.strip():
            raise _refuse(field, BLANK, where=where, item=item)
        if value in seen:
            raise _refuse(field, DUPLICATE, where=where, value=value)
        if propositions is not None and value not in propositions:
            raise _refuse(field, UNKNOWN_PROPOSITION, where=where, value=value)
        seen.append(value)
    return seen


def _per_proposition(
    field: str,
    value: Any,
    propositions: Collection[str] | None,
    check: Any,
    what: str,
) -> dict[str, Any]:
    if not value:
        return {}
    label = LABELS[field]
    if not isinstance(value, Mapping):
        raise _refuse(field, NOT_A_MAPPING, where=label, what=what, value=_shown(value))
    _names(field, label, list(value), "proposition key", propositions)
    return {key: check(field, f"{label} of '{key}'", item) for key, item in value.items()}


def _required_flag(field: str, where: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    raise _refuse(field, NOT_A_FLAG, where=where, value=_shown(value))


def _resource_ids(field: str, where: str, value: Any) -> list[str]:
    if not isinstance(value, list | tuple):
        raise _refuse(field, NOT_A_LIST, where=where, items="candidate ids", value=_shown(value))
    return _names(field, where, value, "candidate id")


# --------------------------------------------------------------------------- plain words

STATE_WORDS = {
    "supported": "supported",
    "contradicted": "contradicted (its sources disagree)",
    "unknown": "unknown (no admissible evidence)",
    "refused": "refused (the compile was refused)",
    "missing": "missing from the output",
}


def _sentence(failure: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """The failure as a sentence with `{name}` holes, and what fills them: a str is one user
    value (a proposition, a perturbation), a list is ids or keys, a `_Word` is our own text."""
    what, key = failure.get("what"), failure.get("key")
    expected, actual = failure.get("expected"), failure.get("actual")
    if what == "slot":
        return "{key} should be {expected}; it is {actual}.", {
            "key": key,
            "expected": _Word(STATE_WORDS.get(str(expected), str(expected))),
            "actual": _Word(STATE_WORDS.get(str(actual), str(actual))),
        }
    if what in ("admitted", "rejected"):
        should = f"should be {what}; {what}: {{actual}}"
        return _set_sentence(f"Exactly {{expected}} {should}", f"Nothing {should}", failure)
    if what == "blocking":
        should = "block the decision; blocking: {actual}"
        return _set_sentence(
            f"Exactly {{expected}} should {should}", f"Nothing should {should}", failure
        )
    if what == "decision_ready":
        should = "be ready" if expected else "not be ready"
        now = "it is ready" if actual else "it is not ready"
        return f"The decision should {should}; {now}.", {}
    if what == "required":
        should = "be required" if expected else "be optional"
        if not isinstance(actual, bool):
            return f"{{key}} should {should}; the output has no such slot.", {"key": key}
        now = "it is required" if actual else "it is optional"
        return f"{{key}} should {should}; {now}.", {"key": key}
    if what == "resource_ids":
        values = {"key": key, "expected": list(expected or ())}
        if not isinstance(actual, list | tuple):
            return "{key} should rest on {expected}; the output has no such slot.", values
        return "{key} should rest on {expected}, in that order; it rests on {actual}.", {
            **values,
            "actual": list(actual),
        }
    if what == "input":
        return "The compiler cannot read the scenario: {key}: {actual}.", {
            "key": str(key),
            "actual": _Word(str(actual)),
        }
    return "{what} {key}: expected {expected}, got {actual}.", {
        "what": str(what),
        "key": str(key),
        "expected": _Word(_shown(expected)),
        "actual": _Word(_shown(actual)),
    }


def _set_sentence(
    lead: str, lead_if_none: str, failure: Mapping[str, Any]
) -> tuple[str, dict[str, Any]]:
    expected = sorted(failure.get("expected") or ())
    actual = sorted(failure.get("actual") or ())
    if not expected:
        lead = lead_if_none
    values: dict[str, Any] = {"expected": expected, "actual": actual}
    details = []
    if extra := [i for i in actual if i not in expected]:
        details.append("{extra} not expected")
        values["extra"] = extra
    if missing := [i for i in expected if i not in actual]:
        details.append("{missing} missing")
        values["missing"] = missing
    tail = f" ({'; '.join(details)})." if details else "."
    return lead + tail, values


class _Word(str):
    """Text of our own (a state in words, a compiler message): not a name to isolate."""


def _under(failure: Mapping[str, Any], sentence: str) -> str:
    return "Under {perturbation}: " + sentence if failure.get("perturbation") else sentence


def failure_text(failure: Mapping[str, Any]) -> str:
    """The failure in plain words (the command line, the JSON report's readers)."""
    sentence, values = _sentence(failure)
    values = {"perturbation": failure.get("perturbation"), **values}
    return _under(failure, sentence).format(**{k: _plain(v) for k, v in values.items()})


def failure_html(failure: Mapping[str, Any]) -> SafeString:
    """The failure in plain words, escaped, each name and id in `<bdi>` (the Result column)."""
    sentence, values = _sentence(failure)
    values = {"perturbation": failure.get("perturbation"), **values}
    return format_html(_under(failure, sentence), **{k: _html(v) for k, v in values.items()})


def _plain(value: Any) -> str:
    if isinstance(value, _Word):
        return str(value)
    if isinstance(value, list):
        return _joined([f"'{item}'" for item in value])
    return f"'{value}'"


def _html(value: Any) -> Any:
    if isinstance(value, _Word):
        return str(value)
    if isinstance(value, list):
        if not value:
            return "nothing"
        parts = [format_html("<bdi>{}</bdi>", item) for item in value]
        return _joined(parts, safe=True)
    return format_html("<bdi>{}</bdi>", value)


def _joined(items: Sequence[str], *, safe: bool = False) -> Any:
    if not items:
        return "nothing"
    if len(items) == 1:
        return items[0]
    if safe:
        head = format_html_join(", ", "{}", ((item,) for item in items[:-1]))
        return format_html("{} and {}", head, items[-1])
    return ", ".join(items[:-1]) + " and " + items[-1]
