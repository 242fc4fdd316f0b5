"""The compiler's validation errors in the workbench's words.

pydantic words a refusal for a programmer ("Input should be a valid tuple", "Extra inputs are
not permitted"). At the workbench's boundary each error is said again from this table, keyed
by pydantic's error type, with the value the user gave; a type the table does not know keeps
pydantic's own message rather than losing it. The field is said by the location shown beside
the message, so no message repeats it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

# {pydantic error type: message}. Placeholders: {got} (the value given, as JSON), {kind} (its
# JSON type), the error's context (`le`, `ge`, `expected`, `error`, `min_length`, …).
MESSAGES: Mapping[str, str] = {
    "missing": "is required",
    "extra_forbidden": "is not a field here: check the spelling",
    "string_type": "must be text (got {kind} {got})",
    "string_too_short": "cannot be empty",
    "int_type": "must be a whole number (got {got})",
    "int_from_float": "must be a whole number (got {got})",
    "float_type": "must be a number (got {kind} {got})",
    "bool_type": "must be true or false (got {got})",
    "tuple_type": "must be a list (got {kind} {got})",
    "list_type": "must be a list (got {kind} {got})",
    "dict_type": "must be a JSON object (got {kind} {got})",
    "model_type": "must be a JSON object (got {kind} {got})",
    "model_attributes_type": "must be a JSON object (got {kind} {got})",
    "date_type": "not a date: give the day as YYYY-MM-DD (got {kind} {got})",
    "date_parsing": "not a date: give the day as YYYY-MM-DD (got {got})",
    "date_from_datetime_parsing": "not a date ({reason}; got {got})",
    "date_from_datetime_inexact": "not a date: give the day without a time (got {got})",
    "greater_than_equal": "must be at least {ge} (got {got})",
    "greater_than": "must be more than {gt} (got {got})",
    "less_than_equal": "must be at most {le} (got {got})",
    "less_than": "must be less than {lt} (got {got})",
    "enum": "must be one of {expected} (got {got})",
    "literal_error": "must be {expected} (got {got})",
    "value_error": "{error}",
    "assertion_error": "{error}",
}

# Ranges said as a range: {(field, pydantic error type): message}.
FIELD_MESSAGES: Mapping[tuple[str, str], str] = {
    (field, kind): "must be between 0 and 1 (got {got})"
    for field in ("relevance", "min_relevance")
    for kind in ("greater_than_equal", "less_than_equal")
}

# What pydantic's date parser says went wrong, in a few words.
DATE_REASONS: Mapping[str, str] = {
    "month value is outside expected range of 1-12": "there is no month {month}",
    "day value is outside expected range": "there is no such day in that month",
    "input is too short": "too short for YYYY-MM-DD",
    "invalid character in year": "the year is not 4 digits",
    "invalid character in month": "the month is not 2 digits",
    "invalid character in day": "the day is not 2 digits",
    "invalid date separator, expected `-`": "the parts are not separated by '-'",
}

JSON_KINDS: Mapping[type, str] = {
    str: "text",
    bool: "true/false",
    int: "number",
    float: "number",
    list: "list",
    tuple: "list",
    dict: "object",
    type(None): "null",
}


def product_message(error: Mapping[str, Any]) -> str:
    """One pydantic error (an item of `ValidationError.errors()`) as the workbench says it."""
    kind = error.get("type", "")
    loc = error.get("loc") or ()
    field = str(loc[-1]) if loc else ""
    template = FIELD_MESSAGES.get((field, kind)) or MESSAGES.get(kind)
    if template is None:
        return str(error.get("msg", ""))
    value = error.get("input")
    context = {k: _said(v) for k, v in (error.get("ctx") or {}).items()}
    if kind == "date_from_datetime_parsing":
        context["reason"] = _date_reason(str(context.get("error", "")), value)
    try:
        return template.format(
            got=_json(value), kind=JSON_KINDS.get(type(value), "value"), **context
        )
    except (KeyError, IndexError):  # a context this pydantic version does not give
        return str(error.get("msg", ""))


def _date_reason(error: str, value: Any) -> str:
    for known, reason in DATE_REASONS.items():
        if error.startswith(known):
            month = value[5:7] if isinstance(value, str) else "?"
            return reason.format(month=month.lstrip("0") or "0")
    return error


def _said(value: Any) -> str:
    return str(value)


def _json(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "…"
