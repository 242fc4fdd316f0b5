"""Starting a suite run, and adding a scenario the Suite strength panel proposes."""

from __future__ import annotations

from typing import Any, cast

from django import forms


class RunForm(forms.Form):
    version = forms.TypedChoiceField(coerce=int, choices=())
    scenario = forms.IntegerField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args: Any, decision_type: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        cast(forms.TypedChoiceField, self.fields["version"]).choices = [
            (v.number, f"v{v.number} ({v.get_status_display().lower()})")
            # Each version's number and status: not its contract, which this does not show.
            for v in decision_type.versions.order_by("-number").only("number", "status")
        ]


class ProposalForm(forms.Form):
    """ "Add this scenario" on the Suite strength panel: which run, which surviving mutant."""

    run = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    mutant = forms.CharField(max_length=300, widget=forms.HiddenInput)
