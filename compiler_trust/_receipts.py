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
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from compiler._canonical import sha256_hex
from compiler._errors import InvalidInput
from compiler._input import CompileInput, Contract
from compiler._output import CompileOutput
from compiler._validate_input import load_input
from compiler_trust._receipt_forms import (
    CARRIES_CONTENT,
    FORMAT,
    FORMAT_COMPACT,
    UNKNOWN_FORMAT,
    ReceiptInvalid,
    compact_content_locations,
    compact_document,
    content_locations,
    expand_receipt,
)

WRONG_BUNDLE = "the receipt names bundle {given}, but it is checked against bundle {expected}"
WRONG_DECISION_TYPE = (
    "the receipt is for decision type '{given}', the bundle's contract is '{expected}'"
)
PLAN_MISMATCH = (
    "compiling the receipt's request and candidates against the bundle gives {field} "
    "{actual!r}, not the receipt's {given!r}: the receipt does not match its bundle"
)


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
    problems = [{"loc": loc, "msg": CARRIES_CONTENT} for loc in content_locations(data)]
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
            # The object itself, not its JSON: a replay compiles thousands of receipts against
            # one contract, which is then validated once and hashed once (the compiler keeps
            # the hash of the last contract object it saw), not once a receipt.
            "contract": contract,
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
        problems += compact_content_locations(data)
    else:
        problems += [{"loc": loc, "msg": CARRIES_CONTENT} for loc in content_locations(data)]
    try:
        header = ReceiptHeader.model_validate(
            {name: data[name] for name in ReceiptHeader.model_fields if name in data}
        )
    except ValidationError as exc:
        problems += [{"loc": list(e["loc"]), "msg": e["msg"]} for e in exc.errors()]
    if problems:
        raise ReceiptInvalid(problems)
    return header


def compact_receipt(receipt: Receipt | Mapping[str, Any]) -> dict[str, Any]:
    """The receipt in `FORMAT_COMPACT`: the same fields, but the candidates as rows.

    Every candidate's metadata is a row `[id, content_sha256, i, j, ...]`, one entry per name
    of `fields`: the index of its value in `values` (each distinct value listed once), or
    null where the candidate does not have that field. The candidates of one decision share
    most of their metadata (entity, roles, purposes, class), so a receipt shrinks to less than
    half; `parse_receipt` reads it back to the same `Receipt`."""
    return compact_document(parse_receipt(receipt).to_json())


def _short(value: Any) -> Any:
    if isinstance(value, tuple) and value and isinstance(value[0], ReceiptSlot):
        return [f"{s.proposition}={s.state}" for s in value]
    if isinstance(value, tuple):
        return list(value)
    return value


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
