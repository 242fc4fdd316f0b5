"""The filters above the scenarios and candidates lists: GET forms whose fields the list's
query narrows by (`scenarios.selectors.ScenarioFilter`). A value no list offers is the
client's mistake: `filter_values` answers it 400, naming the filter."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import BadRequest

from scenarios.models import SLOT_STATES

# Messages tests assert on.
BAD_FILTER = "The filter ‘{name}’ is not valid: {problem}"

ANY = [("", "any")]


class ScenarioFilterForm(forms.Form):
    q = forms.CharField(required=False, max_length=200, label="Name or description")
    corpus = forms.TypedChoiceField(required=False, coerce=int, empty_value=None)
    proposition = forms.ChoiceField(required=False)
    verdict = forms.ChoiceField(
        required=False, choices=ANY + [(s, s) for s in SLOT_STATES], label="Expects"
    )

    def __init__(
        self, *args: Any, corpora: list[tuple[int, str]], propositions: list[str], **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.fields["corpus"].choices = ANY + corpora  # type: ignore[attr-defined]
        self.fields["proposition"].choices = ANY + [(p, p) for p in propositions]  # type: ignore[attr-defined]


class CandidateFilterForm(forms.Form):
    q = forms.CharField(required=False, max_length=200, label="Id contains")
    evidence_class = forms.CharField(required=False, max_length=200, label="Class")


def filter_values(form: forms.Form) -> dict[str, Any]:
    """The cleaned filters of a bound GET form, or BadRequest naming the first bad one."""
    if not form.is_valid():
        name, problems = next(iter(form.errors.items()))
        raise BadRequest(BAD_FILTER.format(name=name, problem=" ".join(str(p) for p in problems)))
    return form.cleaned_data
