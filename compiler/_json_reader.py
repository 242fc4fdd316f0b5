"""Reading untrusted JSON safely: the one parser the CLI, the workbench's upload form and its
`import_fixtures` command share.

`json.loads` alone accepts documents that later crash or poison their reader: arrays nested
tens of thousands deep (a `RecursionError` in the parser or in any recursive walk after it),
integer literals thousands of digits long (Python refuses to convert them with a bare
`ValueError`), escapes that name half a UTF-16 surrogate pair (no character: it can be neither
hashed as RFC 8785 JSON, nor printed as UTF-8, nor stored by PostgreSQL), bytes that are
not UTF-8, and a name given twice in one object (parsers keep the last one silently, so what
was reviewed is not what is read). `parse_json` refuses each of them with `InvalidInput` and a
location: a line and column for what is wrong in the text, the path inside the document for a
lone surrogate.
Pure: no files, no clock.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

from compiler._errors import InvalidInput

# A fixture or compile input is six or seven levels deep; 64 leaves room and keeps every
# recursive walk of the document (pydantic, the workbench's checks) far from Python's limit.
MAX_DEPTH = 64
# RFC 8785 integers stop at 16 digits; a float's significant digits at 17. Anything longer is
# no measurement, and converting it costs time quadratic in its length.
MAX_NUMBER_DIGITS = 100

TOO_LARGE = "the document is {size} bytes; at most {limit} bytes are accepted"
NOT_UTF8 = "not UTF-8 text: byte {start} cannot be decoded (line {line} column {column})"
NOT_JSON = "not valid JSON: {msg} at line {line} column {column}"
TOO_DEEP = "nested more than {limit} levels deep at line {line} column {column}"
DUPLICATE_NAME = (
    "the name {name} is given twice in one object, at line {line} column {column}: "
    "JSON readers disagree on which value counts, so give each name once"
)
TOO_LONG_NUMBER = "a number of more than {limit} digits at line {line} column {column}"
LONE_SURROGATE = "a \\u escape names half a surrogate pair, not a character"

# A string (skipped whole, so brackets and digits inside it do not count; followed by a colon
# it is a name in an object), a bracket, or a run of digits too long to be a number anyone means.
_TOKENS = re.compile(
    r'"[^"\\]*(?:\\.[^"\\]*)*"(?:[ \t\n\r]*:)?|[\[\]{}]|[0-9]{' + str(MAX_NUMBER_DIGITS + 1) + ",}",
    re.DOTALL,
)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def parse_json(data: bytes | str, *, max_bytes: int | None = None) -> Any:
    """The JSON value of `data`, or `InvalidInput` saying where and what is wrong."""
    if max_bytes is not None:
        size = len(data) if isinstance(data, bytes) else len(data.encode("utf-8", "surrogatepass"))
        if size > max_bytes:
            raise _invalid(TOO_LARGE.format(size=size, limit=max_bytes))
    text = _decode(data) if isinstance(data, bytes) else data
    _check_shape(text)
    try:
        value = _loads(text)
    except json.JSONDecodeError as exc:
        raise _invalid(NOT_JSON.format(msg=exc.msg, line=exc.lineno, column=exc.colno)) from None
    except (RecursionError, ValueError) as exc:  # what the shape check should have caught
        raise _invalid(f"not valid JSON: {exc}") from None
    if _SURROGATE_ESCAPE.search(text):
        lone = sorted(_lone_surrogates(value, []), key=_sort_key)
        if lone:
            raise InvalidInput([{"loc": loc, "msg": LONE_SURROGATE} for loc in lone])
    return value


def _loads(text: str) -> Any:
    """`json.loads(text)`, through pydantic-core's parser when it accepts the text.

    It is faster, and it shares each repeated short string (a class, a role, a date) between
    all the places that spell it: a third less memory for a large pool. Where it refuses a
    text (a lone surrogate escape, malformed JSON), `json.loads` decides, so the value and
    every error message are `json.loads`'s own.
    """
    from pydantic_core import from_json  # imported here: a small compile never needs it

    try:
        return from_json(text)
    except ValueError:
        return json.loads(text)


def _invalid(msg: str) -> InvalidInput:
    return InvalidInput([{"loc": [], "msg": msg}])


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line, column = _position(data[: exc.start].decode("utf-8", "replace"), None)
        raise _invalid(NOT_UTF8.format(start=exc.start, line=line, column=column)) from None


def _position(text: str, offset: int | None) -> tuple[int, int]:
    """1-based line and column of `offset` in `text` (its end when None)."""
    offset = len(text) if offset is None else offset
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _check_shape(text: str) -> None:
    """Refuse too deep nesting, a name given twice in one object and absurd numbers before
    the parser sees them (a parser keeps the last of two equal names silently)."""
    depth = 0
    # The names seen in each open object (None for an array), innermost last.
    names: list[set[str] | None] = []
    for token in _TOKENS.finditer(text):
        word = token.group()
        first = word[0]
        if first in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                line, column = _position(text, token.start())
                raise _invalid(TOO_DEEP.format(limit=MAX_DEPTH, line=line, column=column))
            names.append(set() if first == "{" else None)
        elif first in "]}":
            depth -= 1
            if names:
                names.pop()
        elif first == '"':
            if word[-1] == ":" and names and names[-1] is not None:
                _check_name(text, token, names[-1])
        else:
            line, column = _position(text, token.start())
            limit = MAX_NUMBER_DIGITS
            raise _invalid(TOO_LONG_NUMBER.format(limit=limit, line=line, column=column))


def _check_name(text: str, token: re.Match[str], seen: set[str]) -> None:
    raw = token.group().rstrip(" \t\n\r:")
    name = raw[1:-1]
    if "\\" in name:  # "a" and "\u0061" are one name
        try:
            name = json.loads(raw)
        except ValueError:
            return  # malformed: the parser says where
    if name in seen:
        line, column = _position(text, token.start())
        quoted = json.dumps(name, ensure_ascii=False)
        raise _invalid(DUPLICATE_NAME.format(name=quoted, line=line, column=column))
    seen.add(name)


def _lone_surrogates(value: Any, loc: list[Any]) -> Iterator[list[Any]]:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            yield loc
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _lone_surrogates(key, loc)
            yield from _lone_surrogates(item, [*loc, key])
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _lone_surrogates(item, [*loc, index])


def _sort_key(loc: list[Any]) -> list[tuple[bool, Any]]:
    return [(isinstance(part, str), part) for part in loc]


# --------------------------------------------------------------------------- a quick read

_SURROGATE_ESCAPE_BYTES = re.compile(rb"\\u[dD][89a-fA-F]")
_WHITESPACE = re.compile(r"[ \t\n\r]*")


def _float(literal: str) -> float:
    # `parse_json` refuses a run of more digits than MAX_NUMBER_DIGITS; a float literal that
    # long goes back to it. (A long integer needs no such check here: every integer field
    # refuses one above 2**53, and a string field any integer.)
    if len(literal) > MAX_NUMBER_DIGITS:
        raise NotQuick
    return float(literal)


class NotQuick(Exception):  # noqa: N818 - a signal: read the document the careful way
    pass


_scan = json.JSONDecoder(parse_float=_float).scan_once  # type: ignore[attr-defined]  # C


def quick_text(data: bytes) -> str:
    """`data` as text, or `NotQuick` when it might be a text `parse_json` refuses or reads
    differently than `quick_object` would: not UTF-8, or any surrogate escape (a byte order
    mark and long numbers `quick_object` refuses itself)."""
    if b"\\u" in data and _SURROGATE_ESCAPE_BYTES.search(data):
        raise NotQuick
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise NotQuick from None


def quick_object(text: str, key: str, convert: Callable[[Any], Any]) -> dict[str, Any]:
    """The JSON object of a `quick_text`, with each element of its list `key` passed through
    `convert` as soon as it is parsed, so the parsed elements are never all in memory at once.

    The value is `json.loads`'s (which `parse_json` gives for the same text). `NotQuick` (or
    whatever `convert` raises) when the text is anything else: not one object, a parse error,
    a name given twice, `key` not a list, a float literal longer than `MAX_NUMBER_DIGITS`.
    What `parse_json` would refuse and this reads is for the caller's checks to refuse: an
    integer of more digits (no integer field takes one above 2**53), nesting deeper than
    `MAX_DEPTH` (none is expected; the parser's own limit raises long before Python's).
    """
    try:
        return _object(text, key, convert)
    except (ValueError, RecursionError, IndexError, StopIteration):
        raise NotQuick from None


def _object(text: str, key: str, convert: Callable[[Any], Any]) -> dict[str, Any]:
    at = _skip(text, 0)
    if text[at] != "{":
        raise NotQuick
    value: dict[str, Any] = {}
    at = _skip(text, at + 1)
    more = text[at] != "}"
    if not more:
        at = _skip(text, at + 1)
    while more:
        if text[at] != '"':
            raise NotQuick
        name, at = _scan(text, at)
        at = _skip(text, at)
        if text[at] != ":" or name in value:
            raise NotQuick
        at = _skip(text, at + 1)
        if name == key:
            value[name], at = _converted_list(text, at, convert)
        else:
            value[name], at = _scan(text, at)
        at = _skip(text, at)
        more = text[at] == ","
        if not more and text[at] != "}":
            raise NotQuick
        at = _skip(text, at + 1)
    if at != len(text):
        raise NotQuick
    return value


def _skip(text: str, at: int) -> int:
    """The position of the first character at or after `at` that is not JSON whitespace."""
    match = _WHITESPACE.match(text, at)
    assert match is not None  # it matches the empty string at least
    return match.end()


# The candidates of a large document are read a chunk of about this many characters at a time
# by orjson (faster than the standard parser); a chunk it cannot read is read one element at
# a time by the standard parser.
QUICK_CHUNK_CHARS = 1 << 21
_ELEMENT_BOUNDARY = re.compile(r"\}[ \t\n\r]*,[ \t\n\r]*\{")


def _converted_list(text: str, at: int, convert: Callable[[Any], Any]) -> tuple[list[Any], int]:
    """The list starting at `at` with its elements converted, and the position after it.

    A chunk is the text up to a `}, {` past `QUICK_CHUNK_CHARS`. Read as a list of its own, it
    is one only if that `}` closes an element of this list: a `}` inside a string leaves the
    chunk's last string open, a `}` inside an element leaves that element open, and either is
    a parse error. Where orjson reads a number otherwise than `json` (an integer too large for
    64 bits becomes a float), no candidate field accepts either value.
    """
    if text[at] != "[":
        raise NotQuick
    items: list[Any] = []
    at = _skip(text, at + 1)
    if text[at] == "]":
        return items, at + 1
    loads = _chunk_reader(len(text))
    scan_until = at
    while True:
        boundary = None
        if loads is not None and at >= scan_until:
            boundary = _ELEMENT_BOUNDARY.search(text, at + QUICK_CHUNK_CHARS)
        if boundary is not None and loads is not None:
            try:
                chunk = loads("[" + text[at : boundary.start() + 1] + "]")
            except ValueError:
                scan_until = boundary.end()  # read this stretch element by element
            else:
                items.extend(map(convert, chunk))
                del chunk
                at = boundary.end() - 1
                continue
        item, at = _scan(text, at)
        items.append(convert(item))
        at = _skip(text, at)
        if text[at] == "]":
            return items, at + 1
        if text[at] != ",":
            raise NotQuick
        at = _skip(text, at + 1)


def _chunk_reader(size: int) -> Callable[[str], Any] | None:
    if size <= QUICK_CHUNK_CHARS:
        return None  # a small document is read element by element, without importing orjson
    try:
        import orjson
    except ImportError:  # pragma: no cover - a dependency; reading is only slower without it
        return None
    return orjson.loads
