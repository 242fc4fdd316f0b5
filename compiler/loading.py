"""Turning a JSON document into a validated `CompileInput`, or one `InvalidInput` listing
every problem with its location."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from .errors import InvalidInput
from .models import CompileInput


def load_input(document: Any) -> CompileInput:
    try:
        return CompileInput.model_validate(document)
    except ValidationError as exc:
        raise InvalidInput.from_validation_error(exc) from None
