"""An output's JSON text, written in pieces: exactly `json.dumps(output.to_json(), indent=2,
ensure_ascii=False)`, byte for byte, without building the trace and rejection dicts (two per
candidate) or handing them to the pure-Python indenting encoder.

The trace and the rejections are lists of flat rows whose values are strings or null. Each
row is written as the encoder would lay it out (JSON text holds no raw newline, so the
indentation is the only layout): its id, and then the rest of the row, which repeats across a
pool (an admission pass, an outcome, a reason, a detail) and is laid out once per distinct
rest. Everything else is small and goes through `json.dumps` itself.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from json.encoder import encode_basestring  # the C encoder, keeping non-ASCII as is
from typing import TYPE_CHECKING, Any

from compiler._compiled import REJECTION_KEYS, Compiled
from compiler._trace import TRACE_KEYS
from compiler.version import COMPILER_VERSION

if TYPE_CHECKING:
    from compiler._output import CompileOutput

# Rows joined into one piece.
ROWS_PER_PIECE = 2048


class Rows:
    """A field written as a list of records with these keys, from rows of their values."""

    __slots__ = ("keys", "rows")

    def __init__(self, keys: Sequence[str], rows: Callable[[], Iterable[Sequence[Any]]]) -> None:
        self.keys = keys
        self.rows = rows


def compiled_pieces(compiled: Compiled) -> Iterator[str]:
    """The JSON text of the `CompileOutput` that `compiled` becomes, in pieces."""
    refusal = compiled.refusal
    rejections = compiled.rejections
    fields: list[tuple[str, Any]] = [
        ("result", compiled.result),
        ("plan_id", compiled.plan_id),
        ("compiler_version", COMPILER_VERSION),
        ("contract", compiled.contract),
        ("request", compiled.request),
        ("token_budget", compiled.token_budget),
        ("tokens_used", compiled.tokens_used),
        ("packet", compiled.packet),
        ("slots", [_slot(s) for s in compiled.slots]),
        ("decision_ready", compiled.decision_ready),
        ("blocking", compiled.blocking),
        ("rejected", Rows(REJECTION_KEYS, rejections if rejections is not None else tuple)),
        ("valid_until", None if compiled.valid_until is None else compiled.valid_until.isoformat()),
        ("trace", Rows(TRACE_KEYS, compiled.trace)),
        (
            "refusal",
            None
            if refusal is None
            else {"pass": refusal[0], "reason": refusal[1], "detail": refusal[2]},
        ),
    ]
    return object_pieces(fields)


def output_json_text(output: CompileOutput) -> str:
    """`json.dumps(output.to_json(), indent=2, ensure_ascii=False)`, byte for byte, without
    handing the trace and rejections (two records per candidate) to the pure-Python indenting
    encoder."""
    return "".join(output_pieces(output))


def output_pieces(output: CompileOutput) -> Iterator[str]:
    """The JSON text of a `CompileOutput` model, in pieces."""
    head = output.model_dump(mode="json", by_alias=True, exclude={"trace", "rejected"})
    fields: list[tuple[str, Any]] = []
    for name in type(output).model_fields:
        if name in ("trace", "rejected"):
            records = getattr(output, name)
            keys: list[str] = list(records[0]) if len(records) else []
            fields.append((name, Rows(keys, partial(_values, records, keys))))
        else:
            fields.append((name, head[name]))
    return object_pieces(fields)


def _values(records: Iterable[dict[str, Any]], keys: list[str]) -> Iterator[list[Any]]:
    for record in records:
        if list(record) != keys:  # pragma: no cover - records are uniform
            raise ValueError("records of one list must share their keys")
        yield [record[k] for k in keys]


def _slot(s: Any) -> dict[str, Any]:
    return {
        "proposition": s.proposition,
        "state": s.state,
        "resource_ids": list(s.resource_ids),
        "reason": s.reason,
        "required": s.required,
    }


def object_pieces(fields: Iterable[tuple[str, Any]]) -> Iterator[str]:
    """A JSON object of these fields, as `json.dumps(indent=2, ensure_ascii=False)` writes it."""
    yield "{\n"
    for number, (name, value) in enumerate(fields):
        yield (",\n" if number else "") + f"  {encode_basestring(name)}: "
        if isinstance(value, Rows):
            yield from _rows_text(value.keys, value.rows())
        else:
            yield json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n  ")
    yield "\n}"


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, str):
        return encode_basestring(value)
    return json.dumps(value, ensure_ascii=False)


def _rows_text(keys: Sequence[str], rows: Iterable[Sequence[Any]]) -> Iterator[str]:
    """Rows as a list of records, one level down, in pieces of `ROWS_PER_PIECE` records."""
    if not keys:
        yield "[]"
        return
    head = f"    {{\n      {encode_basestring(keys[0])}: "
    rest_keys = [f",\n      {encode_basestring(k)}: " for k in keys[1:]]
    tails: dict[tuple[Any, ...], str] = {}
    written = False
    batch: list[str] = []
    add = batch.append
    for row in rows:
        rest = tuple(row[1:])
        tail = tails.get(rest)
        if tail is None:
            if len(tails) > 4096:  # rests that do not repeat are not worth keeping
                tails.clear()
            parts = [k + _scalar(v) for k, v in zip(rest_keys, rest, strict=True)]
            tail = tails[rest] = "".join(parts) + "\n    }"
        first = row[0]
        add(head + (encode_basestring(first) if type(first) is str else _scalar(first)) + tail)
        if len(batch) == ROWS_PER_PIECE:
            yield (",\n" if written else "[\n") + ",\n".join(batch)
            written = True
            batch.clear()
    if batch:
        yield (",\n" if written else "[\n") + ",\n".join(batch)
        written = True
    yield "\n  ]" if written else "[]"
