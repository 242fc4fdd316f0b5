"""The two forms a receipt is written in, below the receipt's model: `FORMAT` (each
candidate an object) and `FORMAT_COMPACT` (the candidates as rows of indexes into a table of
their distinct values, what a service posts), turning one into the other, and finding
evidence content wherever either could carry it. Pure: no clock, network, randomness or
files."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from compiler._canonical import sha256_hex
from compiler._errors import InvalidInput

FORMAT: Final = "evidence-compiler.receipt/1"

# The same receipt with its candidates as rows (see `compact_receipt`): what a service posts.
FORMAT_COMPACT: Final = "evidence-compiler.receipt/2"

CARRIES_CONTENT = (
    "a receipt never carries evidence content: replace it with content_sha256 (the sha256 "
    "of the UTF-8 text)"
)

UNKNOWN_FORMAT = (
    f"unknown receipt format {{given!r}}: this compiler reads '{FORMAT}' and '{FORMAT_COMPACT}'"
)

BAD_ROWS = (
    'a compact receipt\'s candidates are {{"fields": [names], "values": [values], '
    '"rows": [[id, content_sha256, value index or null per field], ...]}}: {problem}'
)


class ReceiptInvalid(InvalidInput):
    """A receipt that cannot be accepted; `errors` lists `{"loc", "msg"}`, every problem."""

    def __str__(self) -> str:
        return "invalid receipt:\n" + super().__str__().split("\n", 1)[1]


def compact_content_locations(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    # Run on every receipt ingested, so only dicts are looked into (parsed JSON objects are
    # dicts; a `Mapping` check is several times slower).
    table = data.get("candidates")
    if not isinstance(table, dict):
        return []
    found: list[dict[str, Any]] = []
    if isinstance(table.get("fields"), list) and "content" in table["fields"]:
        found.append({"loc": ["candidates", "fields"], "msg": CARRIES_CONTENT})
    values = table.get("values")
    for index, value in enumerate(values if isinstance(values, list) else ()):
        if type(value) is list:
            for form in value:
                if type(form) is dict and "content" in form:
                    found.append({"loc": ["candidates", "values", index], "msg": CARRIES_CONTENT})
                    break
    return found


def content_locations(data: Any) -> list[list[Any]]:
    """Where a `content` member appears in a receipt's candidates and their forms."""
    if not isinstance(data, Mapping) or not isinstance(data.get("candidates"), list | tuple):
        return []
    found = []
    for index, item in enumerate(data["candidates"]):
        if isinstance(item, Mapping):
            if "content" in item:
                found.append(["candidates", index, "content"])
            for f_index, form in enumerate(item.get("forms") or ()):
                if isinstance(form, Mapping) and "content" in form:
                    found.append(["candidates", index, "forms", f_index, "content"])
    return found


def compact_document(document: dict[str, Any]) -> dict[str, Any]:
    """A receipt's `FORMAT` JSON (`Receipt.to_json`) in `FORMAT_COMPACT`: its candidates as
    rows of indexes into a table of their distinct values (`compact_receipt`)."""
    items = document.pop("candidates")
    fields = sorted({name for item in items for name in item} - {"id", "content_sha256"})
    values: list[Any] = []
    positions: dict[str, int] = {}
    rows = []
    for item in items:
        row: list[Any] = [item["id"], item["content_sha256"]]
        for name in fields:
            if name not in item:
                row.append(None)
                continue
            key = sha256_hex(item[name])
            if key not in positions:
                positions[key] = len(values)
                values.append(item[name])
            row.append(positions[key])
        rows.append(row)
    return {
        **document,
        "format": FORMAT_COMPACT,
        "candidates": {"fields": fields, "values": values, "rows": rows},
    }


def expand_receipt(data: Mapping[str, Any]) -> dict[str, Any]:
    """A `FORMAT_COMPACT` receipt as the `FORMAT` object it stands for (`ReceiptInvalid`
    when its rows do not fit its fields and values)."""
    table = data.get("candidates")
    problems: list[dict[str, Any]] = []

    def bad(loc: list[Any], problem: str) -> None:
        problems.append({"loc": ["candidates", *loc], "msg": BAD_ROWS.format(problem=problem)})

    if not isinstance(table, Mapping) or set(table) != {"fields", "values", "rows"}:
        bad([], "these are not")
        raise ReceiptInvalid(problems)
    fields, values, rows = table["fields"], table["values"], table["rows"]
    if not (isinstance(fields, list) and all(isinstance(f, str) for f in fields)):
        bad(["fields"], "fields is not a list of names")
    elif {"id", "content_sha256"} & set(fields) or len(set(fields)) != len(fields):
        bad(["fields"], "a name is listed twice, or is id or content_sha256")
    if not isinstance(values, list):
        bad(["values"], "values is not a list")
    if not isinstance(rows, list):
        bad(["rows"], "rows is not a list")
    if problems:
        raise ReceiptInvalid(problems)
    candidates = []
    for number, row in enumerate(rows):
        if not isinstance(row, list) or len(row) != len(fields) + 2:
            bad(["rows", number], f"a row holds {len(fields) + 2} entries")
            continue
        item = {"id": row[0], "content_sha256": row[1]}
        for name, position in zip(fields, row[2:], strict=True):
            if position is None:
                continue
            if (
                not isinstance(position, int)
                or isinstance(position, bool)
                or not (0 <= position < len(values))
            ):
                bad(["rows", number], f"{position!r} is not an index of values")
                break
            item[name] = values[position]
        candidates.append(item)
    if problems:
        raise ReceiptInvalid(problems)
    return {**data, "format": FORMAT, "candidates": candidates}
