"""Model fields of the scenarios app."""

from __future__ import annotations

from typing import Any

from django.db import models


class ResultJSONField(models.JSONField):
    """A result row's JSON column, without the `CHECK (JSON_VALID(...))` Django gives a
    JSONField on SQLite.

    That check makes SQLite parse every JSON value of every row a run inserts, and a run
    writes megabytes of them: it was about a third of the rows' INSERT (bench/sweep.py). Only
    the run's result writer writes these rows, with orjson's text of Python values, which is
    always valid JSON, and the ORM's own writes are `json.dumps`'s; what reads them parses them
    anyway. PostgreSQL's jsonb has no such check (it parses the text as its type), so nothing
    changes there."""

    def db_check(self, connection: Any) -> str | None:
        return None


def max_length(model: type[models.Model], name: str) -> int:
    """The length limit of one of `model`'s character fields, for the messages and the
    truncations that must stay within it."""
    field = model._meta.get_field(name)
    if not isinstance(field, models.CharField) or field.max_length is None:
        raise TypeError(f"{model.__name__}.{name} is not a character field with a length limit.")
    return field.max_length
