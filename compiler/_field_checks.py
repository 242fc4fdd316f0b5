"""The candidates of a pool, checked and built into `PlainCandidate`s one at a time.

`_slotted_reader` reads a document through `Shared`: a pool has many candidates, so their
checks are written out and each repeated value (a role list, a class, a date, a token count)
is kept once. At the first thing not certainly valid they raise `Unsure`.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from compiler._candidate_fields import CANDIDATE_FIELDS, REQUIRED
from compiler._codes import OrderRole, Requirement
from compiler._slotted import PlainCandidate, PlainForm, PlainSource


class Unsure(Exception):  # noqa: N818 - a signal: let pydantic decide
    pass


DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
ROLES = {r.value: r for r in OrderRole}
REQUIREMENTS = {r.value: r for r in Requirement}

_CANDIDATE_REQUIRED = frozenset(n for n, f in CANDIDATE_FIELDS.items() if f.default is REQUIRED)


def fields(value: Any, required: set[str] | frozenset[str], optional: Any = ()) -> dict:
    if type(value) is not dict:
        raise Unsure
    keys = value.keys()
    if not keys >= required or not keys <= (required | set(optional)):
        raise Unsure
    return value


def identifier(value: Any) -> str:
    if type(value) is not str or not value:
        raise Unsure
    return value


def string(value: Any) -> str:
    if type(value) is not str:
        raise Unsure
    return value


def flag(value: Any) -> bool:
    if type(value) is not bool:
        raise Unsure
    return value


def integer(value: Any, low: int) -> int:
    if type(value) is not int or value < low:
        raise Unsure
    return value


_NO_ITEMS: list[str] = []  # compared with, never changed


def score(value: Any) -> float:
    # A strict float field takes an int (not a bool) and makes it a float, as pydantic does.
    if type(value) is int:
        value = float(value)
    elif type(value) is not float:
        raise Unsure
    if not 0.0 <= value <= 1.0:  # also refuses NaN
        raise Unsure
    return value


# Every candidate field in `PlainCandidate.__slots__` order with what an absent one is, as JSON
# (the stand-in of a required one is of a type no field takes): a candidate merged over this
# has exactly these keys in this order (or an unknown one more).
_CANDIDATE_DEFAULTS: dict[str, Any] = {
    name: _NO_ITEMS if field.default == () else field.default
    for name, field in CANDIDATE_FIELDS.items()
}
# The JSON types each candidate field takes, in slot order.
_CANDIDATE_TYPES = {name: field.json_types for name, field in CANDIDATE_FIELDS.items()}


class _Kept(dict):
    """One object for each equal value (the caller has checked its type)."""

    def __missing__(self, value: Any) -> Any:
        self[value] = value
        return value


class _KeptTuples(dict):
    """One tuple for each list of strings; a lookup of anything else is unsure."""

    def __missing__(self, items: tuple) -> tuple[str, ...]:
        for item in items:
            if type(item) is not str:
                raise Unsure
        self[items] = items
        return items


class _Dates(dict):
    """The date of each ISO date string (the caller has checked it is a string)."""

    def __missing__(self, value: str) -> dt.date:
        if not DATE.fullmatch(value):
            raise Unsure
        try:
            day = self[value] = dt.date.fromisoformat(value)
        except ValueError:
            raise Unsure from None
        return day


class Shared:
    """One object for each repeated value of a pool, and the candidate builder using them."""

    def __init__(self) -> None:
        self.strings: dict[str, str] = _Kept()
        self.tuples: dict[tuple[str, ...], tuple[str, ...]] = _KeptTuples()
        self.dates: dict[str, dt.date] = _Dates()
        self.ints: dict[int, int] = _Kept()
        self.typings: set[tuple[type, ...]] = set()
        """The field types (in slot order) of candidates seen to have only types their
        fields take: a pool's candidates share a few."""

    def string(self, value: Any) -> str:
        if type(value) is not str:
            raise Unsure
        return self.strings[value]

    def strings_tuple(self, value: Any) -> tuple[str, ...]:
        if type(value) is not list:
            raise Unsure
        return self.tuples[tuple(value)]  # a list or an object among the items: TypeError

    def date(self, value: Any) -> dt.date:
        if type(value) is not str:
            raise Unsure
        return self.dates[value]

    def candidate(self, item: Any) -> PlainCandidate:
        """A candidate, its checks written out: a pool has many. Merged over the defaults, its
        values come in slot order, and one look-up of their types checks every field's type
        (a required field left out keeps a stand-in no field takes). (A value that cannot be
        looked up, such as a list among a list's strings, raises `TypeError`: unsure too.)"""
        values = {**_CANDIDATE_DEFAULTS, **item}.values()
        typing = tuple(map(type, values))
        if typing not in self.typings:
            self.check_typing(typing)
        (
            c_id, entity, allowed_roles, allowed_purposes, denied_roles, denied_principals,
            cls, supports, contradicts, valid_from, valid_to, superseded, superseded_by,
            tokens, relevance, content, role, requirement, forms, floor, depends_on, group,
            group_required, source,
        ) = values  # fmt: skip
        if not (c_id and entity and cls):
            raise Unsure
        tuples, strings = self.tuples, self.strings
        c = PlainCandidate.__new__(PlainCandidate)
        c.id, c.entity, c.evidence_class = c_id, strings[entity], strings[cls]
        c.allowed_roles = tuples[tuple(allowed_roles)]
        c.allowed_purposes = tuples[tuple(allowed_purposes)]
        c.supports = tuples[tuple(supports)]
        c.denied_roles = tuples[tuple(denied_roles)] if denied_roles else ()
        c.denied_principals = tuples[tuple(denied_principals)] if denied_principals else ()
        c.contradicts = tuples[tuple(contradicts)] if contradicts else ()
        c.depends_on = tuples[tuple(depends_on)] if depends_on else ()
        c.valid_from = self.dates[valid_from]
        c.valid_to = None if valid_to is None else self.dates[valid_to]
        c.superseded, c.superseded_by = superseded, superseded_by
        if tokens < 0:
            raise Unsure
        c.tokens = self.ints[tokens]
        c.relevance = relevance if type(relevance) is float else float(relevance)
        if not 0.0 <= relevance <= 1.0:  # also refuses NaN
            raise Unsure
        c.content = content
        role, requirement = ROLES.get(role), REQUIREMENTS.get(requirement)
        if role is None or requirement is None:
            raise Unsure
        c.role, c.requirement = role, requirement
        c.forms = self.forms(forms) if forms else ()
        if floor is not None and floor < 0:
            raise Unsure
        c.floor, c.group, c.group_required = floor, group, group_required
        if source is not None:
            source = fields(source, {"kind", "ref"})
            source = PlainSource(string(source["kind"]), string(source["ref"]))
        c.source = source
        # `Candidate`'s own rules (its model validator), in the same terms.
        if c.valid_to is not None and c.valid_to < c.valid_from:
            raise Unsure
        if c.forms or floor is not None or group_required or c.depends_on:
            ranks = [f.rank for f in c.forms]
            if len(set(ranks)) != len(ranks) or (floor is not None and floor > c.full_rank):
                raise Unsure
            if (group_required and group is None) or c_id in c.depends_on:
                raise Unsure
        return c

    def check_typing(self, typing: tuple[type, ...]) -> None:
        """Unsure unless a candidate with these field types has only its fields, each of a
        type it takes (then kept, so the next such candidate needs no check)."""
        if len(typing) != len(_CANDIDATE_TYPES):  # a field no candidate has
            raise Unsure
        for kind, kinds in zip(typing, _CANDIDATE_TYPES.values(), strict=True):
            if kind not in kinds:
                raise Unsure
        self.typings.add(typing)

    def forms(self, value: Any) -> tuple[PlainForm, ...]:
        if type(value) is not list:
            raise Unsure
        forms = []
        for form in value:
            form = fields(form, {"rank", "tokens", "content"})
            rank, tokens = integer(form["rank"], 0), integer(form["tokens"], 0)
            forms.append(PlainForm(rank, tokens, string(form["content"])))
        return tuple(forms)
