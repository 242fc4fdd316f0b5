"""Turning a JSON document into a validated `CompileInput`, or one `InvalidInput` listing
every problem with its location."""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from pydantic import ValidationError

from .errors import InvalidInput
from .input_models import Candidate, CompileInput, NeedsDocument

# Candidates validated between two drops of their JSON in `load_input_consuming`.
CHUNK = 4096


def load_input(document: Any) -> CompileInput:
    with collection_paused():
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
    with collection_paused():
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


# Pauses held at once, by any thread, and whether the collector was enabled before the first.
_pause_lock = threading.Lock()
_pauses = 0
_was_enabled = False


@contextmanager
def collection_paused() -> Iterator[None]:
    """Hold back Python's cyclic garbage collector while a large document is built.

    Validating 100k candidates allocates a few million objects that all stay alive; each
    allocation burst triggers collections that scan them again and find nothing (they hold no
    reference cycles), about a third of the validation time. Reference counting still frees
    everything as usual.

    The collector is process-wide, so the pauses of concurrent threads (a threaded web server
    loading two documents at once) are counted: the first pause disables it, and only the last
    one to end enables it again, and only if it was enabled when the first began.
    """
    global _pauses, _was_enabled
    with _pause_lock:
        if _pauses == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _pause_lock:
            _pauses -= 1
            if _pauses == 0 and _was_enabled:
                gc.enable()
