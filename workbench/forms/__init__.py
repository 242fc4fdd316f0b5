"""Forms parse input; the services in `contracts.services` decide and write."""

from __future__ import annotations

from typing import cast

from django import forms

from compiler.codes import OrderRole
from contracts.models import (
    KEY_HELP,
    SOURCE_CLASS_FIELDS,
    ContractVersion,
    SourceClass,
    SourceClassProposal,
    key_validator,
)
from contracts.roles import Role

from .fields import ListField, LockForm, LockVersionField

# Messages tests assert on.
UNAVAILABLE_CLASSES = "Not an available source class: {keys}."
CLASS_LISTED_TWICE = "Listed twice: {keys}. Give each class once, in precedence order."
CHOOSE_A_CLASS = "Choose a class to accept."

DIRECTION_CHOICES = [("up", "Up"), ("down", "Down")]


class MoveForm(LockForm):
    direction = forms.ChoiceField(choices=DIRECTION_CHOICES)


class SourceClassForm(forms.ModelForm):
    class Meta:
        model = SourceClass
        fields = ["key", "label", "description", "authority_tier", "weak", "retired"]
        widgets = {"description": forms.Textarea(attrs={"rows": 3})}


class SourceClassEditForm(SourceClassForm):
    """The key is fixed once created: contract versions refer to classes by key."""

    lock_version = LockVersionField(required=True)

    class Meta(SourceClassForm.Meta):
        fields = list(SOURCE_CLASS_FIELDS)


class SourceClassProposalForm(forms.ModelForm):
    """The values a policy owner proposes for an existing class, and why."""

    class Meta:
        model = SourceClassProposal
        fields = [*SOURCE_CLASS_FIELDS, "reason"]
        widgets = {
            "description": forms.Textarea(attrs={"rows": 3}),
            "reason": forms.Textarea(attrs={"rows": 3}),
        }


class NewSourceClassProposalForm(SourceClassProposalForm):
    """A proposed new class: its key too."""

    class Meta(SourceClassProposalForm.Meta):
        fields = ["key", *SourceClassProposalForm.Meta.fields]


class ProposalDecisionForm(forms.Form):
    """Accept or reject: the class's lock version the manager saw the impact of, and a note."""

    lock_version = LockVersionField()
    note = forms.CharField(
        required=False,
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Required to reject: the proposer reads it.",
    )


class DecisionTypeForm(forms.Form):
    key = forms.CharField(max_length=120, help_text="e.g. credit.review.continuation")
    title = forms.CharField(max_length=200)
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))
    purposes = ListField(
        item_validators=[key_validator], help_text="Comma-separated, e.g. annual_credit_review"
    )


class PropositionForm(LockForm):
    key = forms.CharField(max_length=64, help_text=KEY_HELP)
    description = forms.CharField(required=False, max_length=2000)
    required = forms.BooleanField(required=False, initial=True, help_text="A gap blocks.")
    max_items = forms.IntegerField(min_value=1, initial=1)

    # The editor shows the add form and a row's edit form at once: keep their ids apart.
    id_pattern = "edit_%s"

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("auto_id", self.id_pattern)
        super().__init__(*args, **kwargs)


class PropositionAddForm(PropositionForm):
    # Typed, not ticked: tick boxes post in the page's (alphabetical) order, and the order
    # here is the proposition's precedence.
    accepted_classes = ListField(
        label="Accepted classes, by precedence",
        help_text="Highest precedence first, comma-separated.",
    )
    id_pattern = "add_%s"

    def __init__(self, *args, class_choices: list[tuple[str, str]], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.class_choices = dict(class_choices)
        field = self.fields["accepted_classes"]
        if class_choices:
            field.help_text += " Available: " + ", ".join(self.class_choices) + "."

    def clean_accepted_classes(self) -> list[str]:
        classes = self.cleaned_data["accepted_classes"]
        unknown = [key for key in classes if key not in self.class_choices]
        if unknown:
            raise forms.ValidationError(UNAVAILABLE_CLASSES.format(keys=", ".join(unknown)))
        twice = [key for i, key in enumerate(classes) if key in classes[:i]]
        if twice:
            raise forms.ValidationError(CLASS_LISTED_TWICE.format(keys=", ".join(twice)))
        return classes


class AcceptedClassForm(LockForm):
    class_key = forms.ChoiceField(label="Accept class", error_messages={"required": CHOOSE_A_CLASS})

    def __init__(self, *args, class_choices: list[tuple[str, str]], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # An empty first option: one click on Accept must not add whichever class sorts first.
        field = cast(forms.ChoiceField, self.fields["class_key"])
        field.choices = [("", "choose a class…"), *class_choices]


class AcceptedClassMoveForm(MoveForm):
    class_key = forms.CharField(max_length=64)


class AcceptedClassRemoveForm(LockForm):
    class_key = forms.CharField(max_length=64)


class SettingsForm(LockForm):
    purposes = ListField(item_validators=[key_validator], help_text="Comma-separated.")
    policy_name = forms.CharField(max_length=64, validators=[key_validator])
    policy_version = forms.IntegerField(min_value=1)
    min_relevance = forms.FloatField(min_value=0.0, max_value=1.0)
    role_order = ListField(
        required=True, help_text="Each of " + ", ".join(str(r) for r in OrderRole) + " once."
    )

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("auto_id", "settings_%s")
        super().__init__(*args, **kwargs)

    @classmethod
    def for_version(cls, version: ContractVersion) -> SettingsForm:
        initial = {field: getattr(version, field) for field in ContractVersion.SETTINGS_FIELDS}
        return cls(initial={"lock_version": version.lock_version, **initial})


class AccessForm(forms.Form):
    username = forms.CharField(max_length=150, label="Person (username)")
    # Least privilege first: the form proposes read access unless told otherwise.
    role = forms.ChoiceField(
        choices=[(role.value, role.value.capitalize()) for role in reversed(Role)],
        initial=Role.VIEWER.value,
    )

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("auto_id", "access_%s")
        super().__init__(*args, **kwargs)


class RevokeForm(forms.Form):
    username = forms.CharField(max_length=150)
