"""Turning a JSON document into a validated `CompileInput`, or one `InvalidInput` listing
every problem with its location."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from compiler._errors import InvalidInput
from compiler._input import Candidate, CompileInput, NeedsDocument

# Candidates validated between two drops of their JSON in `load_input_consuming`.
CHUNK = 4096


def load_input(document: Any) -> CompileInput:
    try:
        return CompileInput.model_validate(document)
    except ValidationError as exc:
        raise InvalidInput.from_validation_error(exc) from None


def load_input_consuming(document: Any, reread: Callable[[], Any]) -> CompileInput:
    """`load_input` for a parsed document that nobody else holds (the CLI's), emptying its
    candidate list as it goes.

    The candidates are validated a chunk at a time and each chunk's JSON objects are let go as
    soon as their models exist, so the parsed pool (about 1 KB a candidate) and the validated
    one are never both whole in memory. Whenever anything is wrong (a candidate's error, or a
    problem that the raw document must locate), `reread()` parses the document again and
    `load_input` reports every problem, at the caller's indices, exactly as it always does.
    """
    items = document.get("candidates") if isinstance(document, dict) else None
    if not isinstance(items, list) or len(items) <= CHUNK:
        return load_input(document)
    validate = Candidate.model_validate
    models: list[Candidate] = []
    try:
        for start in range(0, len(items), CHUNK):
            chunk = items[start : start + CHUNK]
            items[start : start + CHUNK] = [None] * len(chunk)
            models.extend(validate(item) for item in chunk)
            del chunk
        document["candidates"] = models
        del items
        return CompileInput.model_validate(document, context={"prevalidated": True})
    except (ValidationError, NeedsDocument):
        pass
    del document, models
    return load_input(reread())


__all__ = ["CHUNK", "load_input", "load_input_consuming"]
