"""Form fields and the lock form every page's forms share (editor, review, scenarios)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from django import forms


def split_list(value: str) -> list[str]:
    """Items separated by commas or new lines, blanks dropped, order kept."""
    items = (part.strip() for line in value.splitlines() for part in line.split(","))
    return [item for item in items if item]


class ListField(forms.CharField):
    """A list typed as comma- or line-separated text; `item_validators` check each item."""

    def __init__(
        self, *, item_validators: Iterable[Callable[[str], None]] = (), **kwargs: Any
    ) -> None:
        kwargs.setdefault("required", False)
        super().__init__(**kwargs)
        self.item_validators = list(item_validators)

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, list | tuple):
            return ", ".join(map(str, value))
        return value

    # A list where CharField answers a string: what the field is for.
    def to_python(self, value: Any) -> list[str]:  # type: ignore[override]
        return split_list(super().to_python(value) or "")

    def validate(self, value: Any) -> None:
        if self.required and not value:
            raise forms.ValidationError(self.error_messages["required"], code="required")

    def run_validators(self, value: Any) -> None:
        for item in value:
            for validator in self.item_validators:
                validator(item)


class LockVersionField(forms.IntegerField):
    """The row's `lock_version` when the form was opened, posted back so the service can
    refuse an edit of a revision that is no longer current (`contracts.services.check_lock`).
    Blank is allowed unless `required=True`: a form that adds a row has no lock version yet."""

    widget = forms.HiddenInput

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("min_value", 0)
        super().__init__(**kwargs)


class LockForm(forms.Form):
    """Every edit of a draft, and every review button, carries the lock version the page was
    rendered with."""

    lock_version = LockVersionField(required=True)
