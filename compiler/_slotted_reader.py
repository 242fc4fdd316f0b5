"""A document parsed from JSON, checked and built into `_slotted` objects without pydantic.

`load_plain` accepts only what it can check completely: JSON types exactly as
`compiler.models` declares them (strict scalars, lists of strings, ISO dates, the enums'
values), no unknown field, every model validator's rule, and then the cross-reference checks
of `_cross_checks.may_have_problems`. At the first thing it does not accept it answers None,
and the caller validates the document with pydantic, which lists every problem with its
location. So this is a shortcut for valid input and never the judge of invalid input: a
document it accepts is one `CompileInput.model_validate` accepts, with the same values
(tests/compiler/test_compiler_plain_path.py holds it to that).

Parsed pools repeat a few role lists, classes, dates and token counts many times: each is
kept once (`_Shared`), so a large pool costs little more than its ids and contents.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any

from compiler._codes import OrderRole
from compiler._cross_checks import may_have_problems
from compiler._field_checks import ROLES as _ROLES
from compiler._field_checks import Shared as _Shared
from compiler._field_checks import Unsure as _Unsure
from compiler._field_checks import fields as _fields
from compiler._field_checks import flag as _flag
from compiler._field_checks import identifier as _identifier
from compiler._field_checks import integer as _integer
from compiler._field_checks import score as _score
from compiler._field_checks import string as _string
from compiler._json_reader import NotQuick, quick_object
from compiler._slotted import (
    PlainContract,
    PlainDelegation,
    PlainDirectory,
    PlainInput,
    PlainPolicy,
    PlainPolicyRef,
    PlainProposition,
    PlainRequest,
)

_DEFAULT_ROLE_ORDER = tuple(OrderRole)
_REQUEST_REQUIRED = frozenset(
    {"decision_type", "principal", "roles", "purpose", "entity", "decision_date", "token_budget"}
)
_REQUEST_FIELDS = _REQUEST_REQUIRED | {"delegation", "named", "expected_policy"}


def load_plain(document: Any) -> PlainInput | None:
    """The parsed document as plain objects with its candidates in id order, or None when
    pydantic must look at it (it is invalid, or this shortcut cannot tell)."""
    shared = _Shared()
    try:
        items = document["candidates"] if type(document) is dict else None
        if type(items) is not list:
            raise _Unsure
        return _load(document, [shared.candidate(item) for item in items], shared)
    except (_Unsure, KeyError, TypeError):
        return None


def load_plain_text(text: str) -> PlainInput | None:
    """`load_plain(json.loads(text))` for a `_json_reader.quick_text`, each candidate's JSON let go
    as soon as it is built (or None: parse it with `parse_json` and let pydantic look)."""
    shared = _Shared()
    try:
        document = quick_object(text, "candidates", shared.candidate)
        return _load(document, document.get("candidates"), shared)
    except (_Unsure, NotQuick, TypeError):
        return None


def _load(document: dict[str, Any], pool: Any, shared: _Shared) -> PlainInput:
    doc = _fields(document, {"request", "contract", "candidates"}, {"directory"})
    request = _request(doc["request"], shared)
    contract = _contract(doc["contract"], shared)
    directory = _directory(doc.get("directory", {}), shared)
    pool.sort(key=attrgetter("id"))
    plain = PlainInput(request, contract, directory, tuple(pool))
    if may_have_problems(plain):
        raise _Unsure
    return plain


def _request(value: Any, shared: _Shared) -> PlainRequest:
    r = _fields(value, _REQUEST_REQUIRED, _REQUEST_FIELDS)
    delegation = r.get("delegation")
    if delegation is not None:
        d = _fields(
            delegation, {"service", "on_behalf_of", "scopes", "valid_from"}, {"valid_to", "revoked"}
        )
        delegation = PlainDelegation(
            _identifier(d["service"]),
            _identifier(d["on_behalf_of"]),
            shared.strings_tuple(d["scopes"]),
            shared.date(d["valid_from"]),
            None if d.get("valid_to") is None else shared.date(d["valid_to"]),
            _flag(d.get("revoked", False)),
        )
        if delegation.valid_to is not None and delegation.valid_to < delegation.valid_from:
            raise _Unsure
    expected = r.get("expected_policy")
    if expected is not None:
        e = _fields(expected, {"name", "version"})
        if type(e["version"]) is not int:
            raise _Unsure
        expected = PlainPolicyRef(_identifier(e["name"]), e["version"])
    return PlainRequest(
        decision_type=_identifier(r["decision_type"]),
        principal=_identifier(r["principal"]),
        roles=shared.strings_tuple(r["roles"]),
        purpose=_identifier(r["purpose"]),
        entity=_identifier(r["entity"]),
        decision_date=shared.date(r["decision_date"]),
        token_budget=_integer(r["token_budget"], 0),
        delegation=delegation,
        named=shared.strings_tuple(r.get("named", [])),
        expected_policy=expected,
    )


def _contract(value: Any, shared: _Shared) -> PlainContract:
    c = _fields(value, {"decision_type", "version", "purposes", "propositions"}, {"policy"})
    items = c["propositions"]
    if type(items) is not list:
        raise _Unsure
    propositions = []
    for item in items:
        p = _fields(item, {"key", "accepted_classes"}, {"required", "max_items", "description"})
        classes = shared.strings_tuple(p["accepted_classes"])
        if len(set(classes)) != len(classes):
            raise _Unsure
        propositions.append(
            PlainProposition(
                _identifier(p["key"]),
                classes,
                _flag(p.get("required", True)),
                _integer(p.get("max_items", 1), 1),
                _string(p.get("description", "")),
            )
        )
    if len({p.key for p in propositions}) != len(propositions):
        raise _Unsure
    return PlainContract(
        _identifier(c["decision_type"]),
        _string(c["version"]),
        shared.strings_tuple(c["purposes"]),
        tuple(propositions),
        _policy(c.get("policy", {})),
    )


def _policy(value: Any) -> PlainPolicy:
    fields = {"name", "version", "min_relevance", "mandatory_form", "role_order", "on_overrun"}
    p = _fields(value, set(), fields)
    if "role_order" not in p:
        role_order = _DEFAULT_ROLE_ORDER
    else:
        order = p["role_order"]
        if type(order) is not list or any(type(r) is not str or r not in _ROLES for r in order):
            raise _Unsure
        role_order = tuple(_ROLES[r] for r in order)
        if sorted(role_order) != sorted(OrderRole):
            raise _Unsure
    if p.get("mandatory_form", "cheapest") != "cheapest":
        raise _Unsure
    if p.get("on_overrun", "drop_last_discretionary") != "drop_last_discretionary":
        raise _Unsure
    return PlainPolicy(
        _identifier(p.get("name", "default")),
        _integer(p.get("version", 1), 1),
        _score(p.get("min_relevance", 0.0)),
        "cheapest",
        role_order,
        "drop_last_discretionary",
    )


def _directory(value: Any, shared: _Shared) -> PlainDirectory:
    d = _fields(value, set(), {"entities", "role_parents"})
    tables = []
    for name in ("entities", "role_parents"):
        table = d.get(name, {})
        if type(table) is not dict:
            raise _Unsure
        tables.append({_string(k): shared.strings_tuple(v) for k, v in table.items()})
    return PlainDirectory(tables[0], tables[1])
