"""Parsing request parameters: a malformed one is the client's mistake, answered 400."""

from __future__ import annotations

from django.core.exceptions import BadRequest
from django.http import QueryDict

NOT_A_WHOLE_NUMBER = "The parameter ‘{name}’ must be a whole number; ‘{value}’ is not."


def int_parameter(params: QueryDict, name: str) -> int | None:
    """`params[name]` as an int, None when absent or empty; BadRequest (400) naming the
    parameter when it is not a whole number."""
    value = params.get(name)
    if value in (None, ""):
        return None
    try:
        return int(value)
    except ValueError:
        raise BadRequest(NOT_A_WHOLE_NUMBER.format(name=name, value=value[:100])) from None
