"""The input fields the scenario forms share: ISO dates and JSON typed into a text area."""

from __future__ import annotations

import json
from typing import Any

from django import forms

from scenarios.compiling import NOT_JSON, CorpusInvalid, CorpusProblem, read_json


def located(problem: CorpusProblem) -> str:
    """A reading problem as a sentence: the text's own line and column need no prefix."""
    return str(problem) if problem.loc else problem.msg


class IsoDateInput(forms.DateInput):
    """`<input type=date>`: the browser reads and posts only ISO 8601 (`2026-10-11`), so the
    value is rendered that way whatever the locale's date format (en-gb's is `11/10/2026`,
    which a date input shows as blank)."""

    input_type = "date"

    def __init__(self, attrs: dict[str, Any] | None = None) -> None:
        super().__init__(attrs, format="%Y-%m-%d")


class IsoDateField(forms.DateField):
    """Every date the app asks for: the ISO date input (see `IsoDateInput`)."""

    widget = IsoDateInput


class JSONText(forms.CharField):
    """JSON typed into a text area; blank is None."""

    widget = forms.Textarea(attrs={"rows": 4, "spellcheck": "false"})

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        super().__init__(**kwargs)

    def prepare_value(self, value: Any) -> Any:
        if value is None or isinstance(value, str):
            return value
        return json.dumps(value, indent=2)

    def to_python(self, value: Any) -> Any:
        text = (super().to_python(value) or "").strip()
        if not text:
            return None
        try:
            return read_json(text)
        except CorpusInvalid as exc:
            raise forms.ValidationError(
                [NOT_JSON.format(error=located(problem)) for problem in exc.problems]
            ) from None
