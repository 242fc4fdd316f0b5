"""The review and publishing forms: what each transition posts (the actions themselves live
in `publishing.review`)."""

from __future__ import annotations

from django import forms

from .fields import LockForm


class RetireForm(LockForm):
    reason = forms.CharField(required=False, max_length=300)
    # Retiring cannot be undone: the person ticks that they mean it (the page's confirmation
    # step, kept without JavaScript too).
    confirm_retire = forms.BooleanField(
        required=True,
        error_messages={"required": "Tick “I mean to retire” to retire the version."},
    )


class _AnyIds(forms.MultipleChoiceField):
    """Item ids as posted; the approval checks them against the report's widenings."""

    def valid_value(self, value: str) -> bool:
        return bool(value)


class ApproveForm(forms.Form):
    report_sha256 = forms.RegexField(regex=r"^[0-9a-f]{64}$", widget=forms.HiddenInput)
    comment = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    acknowledged_widenings = _AnyIds(required=False)
    # {"statement", "signature"}: made by signing.js in the page, or by sign-approval.
    signed_statement = forms.CharField(required=False, max_length=20000)


class JustifyForm(forms.Form):
    """One cause of violations (the impact report's row) and why it is acceptable."""

    operator = forms.CharField(max_length=64)
    proposition = forms.CharField(max_length=200, required=False)
    cause = forms.CharField(max_length=1000, required=False)
    text = forms.CharField(max_length=4000)


class PublishForm(LockForm):
    published_at = forms.DateTimeField(widget=forms.HiddenInput)
    signed_statement = forms.CharField(required=False, max_length=20000)


class RequestChangesForm(forms.Form):
    comment = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}), label="What needs to change"
    )
