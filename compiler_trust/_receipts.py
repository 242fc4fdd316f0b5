"""Decision receipts: what a production compile decided, without the evidence's content.

A receipt records one compile against a verified bundle: the decision id, the bundle's
sha256, the plan id, the request and directory as given, every candidate's metadata with its
content (and each form's content) replaced by the sha256 of that text, and what came out:
the result, the slots, the packet ids and the refusal. The compiler's decisions never read
content (tokens are declared, not counted), so a receipt holds everything needed to compile
the same decision again (`replay`) against this contract or another one, and yet no
evidence text leaves the service that made the decision.

    receipt = make_receipt(document, output, bundle_sha256=bundle.sha256)
    compact_receipt(receipt)              # the JSON a service posts (FORMAT_COMPACT)
    receipt_header(data)                  # format, ids, field names and no content: cheap
    check_receipt(receipt, bundle)        # ReceiptInvalid listing every problem, or the model
    replay(receipt, other_contract)       # a CompileOutput, exactly what that contract decides

Pure: no clock, network, randomness or files. Two formats are read: `FORMAT` (candidates as
objects) and `FORMAT_COMPACT` (candidates as rows of indexes into a table of their distinct
values); docs/distribution.md describes both.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from compiler._canonical import sha256_hex
from compiler._errors import InvalidInput
from compiler._input import CompileInput, Contract
from compiler._output import CompileOutput
from compiler._validate_input import load_input

FORMAT: Final = "evidence-compiler.receipt/1"
# The same receipt with its candidates as rows (see `compact_receipt`): what a service posts.
FORMAT_COMPACT: Final = "evidence-compiler.receipt/2"

CARRIES_CONTENT = (
    "a receipt never carries evidence content: replace it with content_sha256 (the sha256 "
    "of the UTF-8 text)"
)
WRONG_BUNDLE = "the receipt names bundle {given}, but it is checked against bundle {expected}"
WRONG_DECISION_TYPE = (
    "the receipt is for decision type '{given}', the bundle's contract is '{expected}'"
)
UNKNOWN_FORMAT = (
    f"unknown receipt format {{given!r}}: this compiler reads '{FORMAT}' and '{FORMAT_COMPACT}'"
)
BAD_ROWS = (
    'a compact receipt\'s candidates are {{"fields": [names], "values": [values], '
    '"rows": [[id, content_sha256, value index or null per field], ...]}}: {problem}'
)
PLAN_MISMATCH = (
    "compiling the receipt's request and candidates against the bundle gives {field} "
    "{actual!r}, not the receipt's {given!r}: the receipt does not match its bundle"
)


class ReceiptInvalid(InvalidInput):
    """A receipt that cannot be accepted; `errors` lists `{"loc", "msg"}`, every problem."""

    def __str__(self) -> str:
        return "invalid receipt:\n" + super().__str__().split("\n", 1)[1]


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ReceiptForm(_Strict):
    rank: int
    tokens: int
    content_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class ReceiptCandidate(BaseModel):
    """A candidate's metadata: every field of `compiler.Candidate` but `content`,
    which is `content_sha256`. Other fields are checked when the receipt is replayed."""

    model_config = ConfigDict(frozen=True, extra="allow")

    id: str
    content_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    forms: tuple[ReceiptForm, ...] = ()


class ReceiptSlot(_Strict):
    proposition: str
    state: str
    reason: str
    resource_ids: tuple[str, ...]
    required: bool


class Receipt(_Strict):
    format: Literal["evidence-compiler.receipt/1"] = FORMAT
    decision_id: str = Field(min_length=1, max_length=200)
    bundle_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    decision_type: str
    contract_version: str
    compiler_version: str
    plan_id: str | None
    result: Literal["compiled", "refused"]
    request: dict[str, Any]
    directory: dict[str, Any] = {}
    candidates: tuple[ReceiptCandidate, ...]
    slots: tuple[ReceiptSlot, ...] = ()
    packet: tuple[str, ...] = ()
    decision_ready: bool = False
    refusal: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


def content_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def candidate_metadata(candidate: Mapping[str, Any]) -> dict[str, Any]:
    """A candidate with its content, and each form's, replaced by the text's sha256."""
    meta = {k: v for k, v in candidate.items() if k != "content"}
    meta["content_sha256"] = content_sha256(candidate["content"])
    if "forms" in candidate:
        meta["forms"] = [
            {**{k: v for k, v in f.items() if k != "content"},
             "content_sha256": content_sha256(f["content"])}
            for f in candidate["forms"]
        ]  # fmt: skip
    return meta


def make_receipt(
    document: CompileInput,
    output: CompileOutput,
    *,
    bundle_sha256: str,
    decision_id: str | None = None,
) -> Receipt:
    """The receipt of `output`, the compile of `document` against bundle `bundle_sha256`.

    Without a `decision_id` the receipt is named after what it records (`d-` and 32 hex
    digits of the sha256 of the rest), so the same decision always gets the same id."""
    raw = document.model_dump(mode="json", exclude_defaults=True)
    fields: dict[str, Any] = {
        "format": FORMAT,
        "bundle_sha256": bundle_sha256,
        "decision_type": document.contract.decision_type,
        "contract_version": document.contract.version,
        "compiler_version": output.compiler_version,
        "plan_id": output.plan_id,
        "result": str(output.result),
        "request": raw["request"],
        "directory": raw.get("directory", {}),
        "candidates": [candidate_metadata(c) for c in raw["candidates"]],
        "slots": [s.model_dump(mode="json") for s in output.slots],
        "packet": list(output.packet_ids),
        "decision_ready": output.decision_ready,
        "refusal": output.refusal.model_dump(mode="json", by_alias=True)
        if output.refusal
        else None,
    }
    fields["decision_id"] = decision_id or "d-" + sha256_hex(fields)[:32]
    return Receipt.model_validate(fields)


def parse_receipt(data: Any) -> Receipt:
    """A receipt from its JSON object, or `ReceiptInvalid` listing every problem. Content is
    refused wherever it appears, with its own message."""
    if isinstance(data, Receipt):
        return data
    if isinstance(data, Mapping) and data.get("format") == FORMAT_COMPACT:
        data = expand_receipt(data)
    elif isinstance(data, Mapping) and data.get("format", FORMAT) != FORMAT:
        raise ReceiptInvalid([{"loc": ["format"], "msg": UNKNOWN_FORMAT.format(
            given=data.get("format"))}])  # fmt: skip
    problems = [{"loc": loc, "msg": CARRIES_CONTENT} for loc in _content_locations(data)]
    try:
        receipt = Receipt.model_validate(data)
    except ValidationError as exc:
        problems += [
            {"loc": list(e["loc"]), "msg": e["msg"]}
            for e in exc.errors()
            if not (e["type"] == "extra_forbidden" and e["loc"][-1] == "content")
        ]
        receipt = None
    if problems:
        raise ReceiptInvalid(sorted(problems, key=lambda p: [str(x) for x in p["loc"]]))
    assert receipt is not None
    return receipt


def receipt_input(receipt: Receipt, contract: Contract) -> CompileInput:
    """The compile input a receipt records, against `contract`. Each content is the
    placeholder text of its sha256: nothing the compiler decides reads it."""
    candidates = []
    for meta in receipt.candidates:
        item = meta.model_dump(mode="json")
        item["content"] = item.pop("content_sha256")
        if meta.forms:
            item["forms"] = [
                {"rank": f.rank, "tokens": f.tokens, "content": f.content_sha256}
                for f in meta.forms
            ]
        else:
            item.pop("forms", None)
        candidates.append(item)
    return load_input(
        {
            "request": receipt.request,
            "contract": contract.model_dump(mode="json"),
            "directory": receipt.directory,
            "candidates": candidates,
        }
    )


def replay(receipt: Receipt | Mapping[str, Any], contract: Contract) -> CompileOutput:
    """Compile a receipt's request and candidates against `contract` (another version, say).

    Exact: the result, slots, packet and plan id are what compiling the original candidates
    against `contract` gives, since no decision depends on content (only the packet items'
    `content` is the placeholder)."""
    from compiler._pipeline import compile_input

    return compile_input(receipt_input(parse_receipt(receipt), contract))


def check_receipt(receipt: Receipt | Mapping[str, Any], bundle: Any) -> Receipt:
    """The receipt, if it is well formed, carries no content and matches `bundle` (a
    `VerifiedBundle`): the same bundle sha256 and decision type, and compiling its request
    and candidates against the bundle's contract gives its plan id, result and slots.
    Otherwise `ReceiptInvalid` listing every problem."""
    model = parse_receipt(receipt)
    problems: list[dict[str, Any]] = []
    if model.bundle_sha256 != bundle.sha256:
        problems.append({"loc": ["bundle_sha256"], "msg": WRONG_BUNDLE.format(
            given=model.bundle_sha256, expected=bundle.sha256)})  # fmt: skip
    contract = bundle.contract
    if model.decision_type != contract.decision_type:
        problems.append({"loc": ["decision_type"], "msg": WRONG_DECISION_TYPE.format(
            given=model.decision_type, expected=contract.decision_type)})  # fmt: skip
    if problems:
        raise ReceiptInvalid(problems)
    try:
        output = replay(model, contract)
    except InvalidInput as exc:
        raise ReceiptInvalid(exc.errors) from None
    recompiled = {
        "contract_version": contract.version,
        "compiler_version": output.compiler_version,
        "plan_id": output.plan_id,
        "result": str(output.result),
        "slots": tuple(ReceiptSlot.model_validate(s.model_dump(mode="json"))
                       for s in output.slots),
        "packet": tuple(output.packet_ids),
        "decision_ready": output.decision_ready,
        "refusal": output.refusal.model_dump(mode="json", by_alias=True)
        if output.refusal else None,
    }  # fmt: skip
    for field, actual in recompiled.items():
        given = getattr(model, field)
        if given != actual:
            problems.append({"loc": [field], "msg": PLAN_MISMATCH.format(
                field=field, actual=_short(actual), given=_short(given))})  # fmt: skip
    if problems:
        raise ReceiptInvalid(problems)
    return model


class ReceiptHeader(_Strict):
    """What a receipt names, read without reading the rest (`receipt_header`)."""

    format: Literal["evidence-compiler.receipt/1", "evidence-compiler.receipt/2"] = FORMAT
    decision_id: str = Field(min_length=1, max_length=200)
    bundle_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    decision_type: str = Field(min_length=1)


_REQUIRED = frozenset(name for name, info in Receipt.model_fields.items() if info.is_required())
MISSING_FIELD = "a receipt must have this field"
UNKNOWN_FIELD = "a receipt has no such field"


def receipt_header(data: Any) -> ReceiptHeader:
    """A receipt's header (format, decision id, bundle, decision type), its fields' names and
    the absence of content checked, at a small fraction of `parse_receipt`'s cost: what a
    service posting thousands a second can be told at once. The rest of it is checked when
    it is compiled again (`check_receipt`). `ReceiptInvalid` listing every problem."""
    if not isinstance(data, Mapping):
        raise ReceiptInvalid([{"loc": [], "msg": "a receipt is a JSON object"}])
    if data.get("format", FORMAT) not in (FORMAT, FORMAT_COMPACT):
        raise ReceiptInvalid([{"loc": ["format"], "msg": UNKNOWN_FORMAT.format(
            given=data.get("format"))}])  # fmt: skip
    problems: list[dict[str, Any]] = [
        {"loc": [name], "msg": MISSING_FIELD} for name in sorted(_REQUIRED - set(data))
    ]
    problems += [{"loc": [name], "msg": UNKNOWN_FIELD}
                 for name in sorted(set(data) - set(Receipt.model_fields))]  # fmt: skip
    if data.get("format") == FORMAT_COMPACT:
        problems += _compact_content_locations(data)
    else:
        problems += [{"loc": loc, "msg": CARRIES_CONTENT} for loc in _content_locations(data)]
    try:
        header = ReceiptHeader.model_validate(
            {name: data[name] for name in ReceiptHeader.model_fields if name in data}
        )
    except ValidationError as exc:
        problems += [{"loc": list(e["loc"]), "msg": e["msg"]} for e in exc.errors()]
    if problems:
        raise ReceiptInvalid(problems)
    return header


def _compact_content_locations(data: Mapping[str, Any]) -> list[dict[str, Any]]:
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


def compact_receipt(receipt: Receipt | Mapping[str, Any]) -> dict[str, Any]:
    """The receipt in `FORMAT_COMPACT`: the same fields, but the candidates as rows.

    Every candidate's metadata is a row `[id, content_sha256, i, j, ...]`, one entry per name
    of `fields`: the index of its value in `values` (each distinct value listed once), or
    null where the candidate does not have that field. The candidates of one decision share
    most of their metadata (entity, roles, purposes, class), so a receipt shrinks to less than
    half; `parse_receipt` reads it back to the same `Receipt`."""
    model = parse_receipt(receipt)
    document = model.to_json()
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


def _short(value: Any) -> Any:
    if isinstance(value, tuple) and value and isinstance(value[0], ReceiptSlot):
        return [f"{s.proposition}={s.state}" for s in value]
    if isinstance(value, tuple):
        return list(value)
    return value


def _content_locations(data: Any) -> list[list[Any]]:
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


__all__ = [
    "FORMAT",
    "FORMAT_COMPACT",
    "Receipt",
    "ReceiptHeader",
    "ReceiptInvalid",
    "candidate_metadata",
    "check_receipt",
    "compact_receipt",
    "content_sha256",
    "expand_receipt",
    "make_receipt",
    "parse_receipt",
    "receipt_header",
    "receipt_input",
    "replay",
]
