"""A document parsed from JSON, checked and built into `plain` objects without pydantic.

`load_plain` accepts only what it can check completely: JSON types exactly as
`compiler.models` declares them (strict scalars, lists of strings, ISO dates, the enums'
values), no unknown field, every model validator's rule, and then the cross-reference checks
of `validation.may_have_problems`. At the first thing it does not accept it answers None,
and the caller validates the document with pydantic, which lists every problem with its
location. So this is a shortcut for valid input and never the judge of invalid input: a
document it accepts is one `CompileInput.model_validate` accepts, with the same values
(tests/compiler/test_compiler_plain_path.py holds it to that).

Parsed pools repeat a few role lists, classes, dates and token counts many times: each is
kept once (`_Shared`), so a large pool costs little more than its ids and contents.
"""

from __future__ import annotations

import datetime as dt
import re
from operator import attrgetter
from typing import Any

from .codes import OrderRole, Requirement
from .jsonio import NotQuick, quick_object
from .plain import (
    PlainCandidate,
    PlainContract,
    PlainDelegation,
    PlainDirectory,
    PlainForm,
    PlainInput,
    PlainPolicy,
    PlainPolicyRef,
    PlainProposition,
    PlainRequest,
    PlainSource,
)
from .validation import may_have_problems


class _Unsure(Exception):  # noqa: N818 - a signal: let pydantic decide
    pass


_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_ROLES = {r.value: r for r in OrderRole}
_REQUIREMENTS = {r.value: r for r in Requirement}
_DEFAULT_ROLE_ORDER = tuple(OrderRole)

_CANDIDATE_REQUIRED = frozenset(
    {"id", "entity", "allowed_roles", "allowed_purposes", "evidence_class", "supports"}
    | {"valid_from", "tokens", "relevance", "content"}
)
_CANDIDATE_FIELDS = frozenset(PlainCandidate.__slots__)
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
    """`load_plain(json.loads(text))` for a `jsonio.quick_text`, each candidate's JSON let go
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


def _fields(value: Any, required: set[str] | frozenset[str], optional: Any = ()) -> dict:
    if type(value) is not dict:
        raise _Unsure
    keys = value.keys()
    if not keys >= required or not keys <= (required | set(optional)):
        raise _Unsure
    return value


def _identifier(value: Any) -> str:
    if type(value) is not str or not value:
        raise _Unsure
    return value


def _string(value: Any) -> str:
    if type(value) is not str:
        raise _Unsure
    return value


def _flag(value: Any) -> bool:
    if type(value) is not bool:
        raise _Unsure
    return value


def _integer(value: Any, low: int) -> int:
    if type(value) is not int or value < low:
        raise _Unsure
    return value


_ABSENT: Any = object()
_NO_ITEMS: list[str] = []  # compared with, never changed
_OPTIONAL_LISTS = ("denied_roles", "denied_principals", "contradicts", "depends_on")


def _enum(members: dict[str, Any], value: Any) -> Any:
    member = members.get(value) if type(value) is str else None
    if member is None:
        raise _Unsure
    return member


def _score(value: Any) -> float:
    # A strict float field takes an int (not a bool) and makes it a float, as pydantic does.
    if type(value) is int:
        value = float(value)
    elif type(value) is not float:
        raise _Unsure
    if not 0.0 <= value <= 1.0:  # also refuses NaN
        raise _Unsure
    return value


class _Shared:
    """One object for each repeated value of a pool, and the candidate builder using them."""

    def __init__(self) -> None:
        self.strings: dict[str, str] = {}
        self.tuples: dict[tuple[str, ...], tuple[str, ...]] = {(): ()}
        self.dates: dict[str, dt.date] = {}
        self.ints: dict[int, int] = {}
        self.layouts: set[tuple[str, ...]] = set()
        """The field names (in order) of candidates seen to name only candidate fields and
        every required one: a pool's candidates share a few layouts."""

    def string(self, value: Any) -> str:
        if type(value) is not str:
            raise _Unsure
        return self.strings.setdefault(value, value)

    def strings_tuple(self, value: Any) -> tuple[str, ...]:
        if type(value) is not list:
            raise _Unsure
        items = tuple(value)
        try:
            known = self.tuples.get(items)  # only tuples of strings are kept
        except TypeError:  # a list or an object among the items
            raise _Unsure from None
        if known is None:
            for item in items:
                if type(item) is not str:
                    raise _Unsure
            known = self.tuples[items] = items
        return known

    def date(self, value: Any) -> dt.date:
        if type(value) is not str:
            raise _Unsure
        day = self.dates.get(value)
        if day is None:
            if not _DATE.fullmatch(value):
                raise _Unsure
            try:
                day = dt.date.fromisoformat(value)
            except ValueError:
                raise _Unsure from None
            self.dates[value] = day
        return day

    def candidate(self, item: Any) -> PlainCandidate:
        """A candidate, its checks written out: a pool has many. (A value that cannot be
        looked up, such as a list where a string belongs, raises `TypeError`: unsure too.)"""
        if type(item) is not dict:
            raise _Unsure
        layout = tuple(item)
        if layout not in self.layouts:
            if not _CANDIDATE_REQUIRED <= set(layout) <= _CANDIDATE_FIELDS:
                raise _Unsure
            self.layouts.add(layout)
        get = item.get
        tuples, strings = self.tuples.get, self.strings_tuple
        dates = self.dates.get
        c = PlainCandidate.__new__(PlainCandidate)
        c.id, entity, cls = item["id"], item["entity"], item["evidence_class"]
        if type(c.id) is not str or type(entity) is not str or type(cls) is not str:
            raise _Unsure
        if not (c.id and entity and cls):
            raise _Unsure
        text = self.strings.setdefault
        c.entity, c.evidence_class = text(entity, entity), text(cls, cls)
        # Only lists of strings are kept in `tuples`: a hit needs no check.
        value = item["allowed_roles"]
        c.allowed_roles = (type(value) is list and tuples(tuple(value))) or strings(value)
        value = item["allowed_purposes"]
        c.allowed_purposes = (type(value) is list and tuples(tuple(value))) or strings(value)
        value = item["supports"]
        c.supports = (type(value) is list and tuples(tuple(value))) or strings(value)
        for name in _OPTIONAL_LISTS:
            value = get(name, _NO_ITEMS)
            if value != _NO_ITEMS:
                value = (type(value) is list and tuples(tuple(value))) or strings(value)
            setattr(c, name, value or ())
        value = item["valid_from"]
        c.valid_from = dates(value) or self.date(value)
        value = get("valid_to")
        c.valid_to = None if value is None else (dates(value) or self.date(value))
        value = get("superseded", False)
        if value is not True and value is not False:
            raise _Unsure
        c.superseded = value
        value = get("superseded_by")
        if value is not None and type(value) is not str:
            raise _Unsure
        c.superseded_by = value
        value = item["tokens"]
        if type(value) is not int or value < 0:
            raise _Unsure
        c.tokens = self.ints.setdefault(value, value)
        value = item["relevance"]
        c.relevance = value if type(value) is float and 0.0 <= value <= 1.0 else _score(value)
        c.content = item["content"]
        if type(c.content) is not str:
            raise _Unsure
        value = get("role", _ABSENT)
        c.role = OrderRole.EVIDENCE if value is _ABSENT else _enum(_ROLES, value)
        value = get("requirement", _ABSENT)
        c.requirement = Requirement.PREFERRED if value is _ABSENT else _enum(_REQUIREMENTS, value)
        value = get("forms", _ABSENT)
        c.forms = () if value is _ABSENT else self.forms(value)
        value = get("floor")
        c.floor = None if value is None else _integer(value, 0)
        value = get("group")
        if value is not None and type(value) is not str:
            raise _Unsure
        c.group = value
        value = get("group_required", False)
        if value is not True and value is not False:
            raise _Unsure
        c.group_required = value
        value = get("source")
        if value is not None:
            value = _fields(value, {"kind", "ref"})
            value = PlainSource(_string(value["kind"]), _string(value["ref"]))
        c.source = value
        # `Candidate`'s own rules (its model validator), in the same terms.
        if c.valid_to is not None and c.valid_to < c.valid_from:
            raise _Unsure
        if c.forms or c.floor is not None or c.group_required or c.depends_on:
            ranks = [f.rank for f in c.forms]
            if len(set(ranks)) != len(ranks) or (c.floor is not None and c.floor > c.full_rank):
                raise _Unsure
            if (c.group_required and c.group is None) or c.id in c.depends_on:
                raise _Unsure
        return c

    def forms(self, value: Any) -> tuple[PlainForm, ...]:
        if type(value) is not list:
            raise _Unsure
        forms = []
        for form in value:
            form = _fields(form, {"rank", "tokens", "content"})
            rank, tokens = _integer(form["rank"], 0), _integer(form["tokens"], 0)
            forms.append(PlainForm(rank, tokens, _string(form["content"])))
        return tuple(forms)


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
