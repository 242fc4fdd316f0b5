"""RFC 8785 canonical JSON and the hashes taken over it."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import rfc8785

# JCS integers are those an IEEE 754 double holds exactly; rfc8785 refuses the rest.
_INT_MAX = 2**53 - 1
_SURROGATES_FROM = "\U00010000"  # keys with such characters sort differently in UTF-16
_ENCODER = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, sort_keys=True, separators=(",", ":")
)


def _plain(value: Any) -> bool:
    """Whether `value` holds only what Python's own JSON encoder writes exactly as RFC 8785
    does: floats only where Python's text is ECMAScript's, integers in JCS's range, string
    keys without characters beyond the Basic Multilingual Plane (JCS orders keys by UTF-16
    code units, Python by code points; the two agree below U+10000)."""
    stack = [value]
    pop, extend = stack.pop, stack.extend
    while stack:
        item = pop()
        kind = type(item)
        if kind is str or item is None or kind is bool:
            continue
        if kind is dict:
            for key in item:
                if type(key) is not str or not (key.isascii() or max(key) < _SURROGATES_FROM):
                    return False
            extend(item.values())
        elif kind is list or kind is tuple:
            extend(item)
        elif kind is int:
            if not -_INT_MAX <= item <= _INT_MAX:
                return False
        elif not _plain_other(item):
            return False
    return True


def _plain_other(item: Any) -> bool:
    """A float, or a subclass of a JSON type (a str enum is written as its text, an int enum
    as its number, a named tuple as a list, by both encoders)."""
    if isinstance(item, float):
        # Both write the shortest digits that read back; they differ only where Python
        # writes an exponent or a trailing ".0" (and on NaN and infinities, "nan"/"inf").
        text = repr(item)
        return not ("e" in text or "n" in text or text.endswith(".0"))
    if isinstance(item, (str, bool)):
        return True
    if isinstance(item, int):
        return -_INT_MAX <= item <= _INT_MAX
    if isinstance(item, (dict, list, tuple)):
        return _plain(dict(item) if isinstance(item, dict) else list(item))
    return False


def canonical_bytes(value: Any) -> bytes:
    """The JCS (RFC 8785) serialisation of a JSON-compatible value.

    rfc8785 is pure Python and was most of a suite run's time (a compile's plan id, a
    bundle's suite, a report's hash); the values hashed are almost always plain, and for
    those the C JSON encoder writes the very same bytes, so only the others go to rfc8785."""
    if _plain(value):
        try:
            return _ENCODER.encode(value).encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: rfc8785 refuses it, naming why
            pass
    return rfc8785.dumps(value)


def sha256_hex(value: Any) -> str:
    return hashlib.sha256(canonical_bytes(value)).hexdigest()
