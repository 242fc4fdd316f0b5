"""A scenario: its request and the expectations pinned on its output."""

from __future__ import annotations

from typing import Any, cast

from django import forms

from scenarios.models import SLOT_STATES, Corpus, Scenario
from scenarios.services import SCENARIO_REQUEST_FIELDS
from workbench.forms.fields import ListField, LockVersionField

from .inputs import IsoDateField, JSONText

NOT_CHECKED = ""
# The pins' three-way selects: "not checked" is blank, the others map to the stored value.
DECISION_READY_CHOICES = [
    (NOT_CHECKED, "not checked"),
    ("ready", "ready"),
    ("not_ready", "not ready"),
]
DECISION_READY_VALUES = {"ready": True, "not_ready": False}
REQUIRED_CHOICES = [
    (NOT_CHECKED, "not checked"),
    ("required", "required"),
    ("optional", "optional"),
]
REQUIRED_VALUES = {"required": True, "optional": False}
UNCHECKED_BLOCKING = (
    "Tick 'Check the blocking propositions' to check the ones ticked below, or untick them."
)
UNCHECKED_RESOURCES = (
    "Tick 'check' to pin the resource ids of '{key}', or clear them (nothing was saved)."
)
# The fields shown apart from the grid: the output's pins, and one row per proposition.
PIN_FIELDS = ("expected_decision_ready", "check_blocking", "expected_blocking")
NO_ROLES = "Give at least one role the principal holds, separated by commas."


class ScenarioForm(forms.Form):
    lock_version = LockVersionField()
    name = forms.CharField(max_length=160)
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    corpus = forms.ModelChoiceField(queryset=Corpus.objects.none())
    principal = forms.CharField(max_length=120)
    roles = ListField(
        required=True,
        help_text="Comma-separated.",
        error_messages={"required": NO_ROLES},
    )
    purpose = forms.CharField(max_length=120)
    entity = forms.CharField(max_length=200, help_text="An id or an alias from the directory.")
    decision_date = IsoDateField()
    token_budget = forms.IntegerField(min_value=0)
    delegation = JSONText(
        help_text='Optional: {"service", "on_behalf_of", "scopes", "valid_from", "valid_to", '
        '"revoked"}.'
    )
    named = ListField(help_text="Ids the task names explicitly (optional).")
    check_admitted = forms.BooleanField(required=False, label="Check the admitted ids")
    expected_admitted = ListField()
    check_rejected = forms.BooleanField(required=False, label="Check the rejected ids")
    expected_rejected = ListField()
    expected_decision_ready = forms.ChoiceField(
        label="Decision ready",
        choices=DECISION_READY_CHOICES,
        required=False,
        help_text="Whether the compile must leave the decision ready (nothing required is "
        "missing or disputed).",
    )
    check_blocking = forms.BooleanField(required=False, label="Check the blocking propositions")
    expected_blocking = forms.MultipleChoiceField(
        label="Blocking propositions",
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Exactly the checked propositions must block the decision; none checked: "
        "nothing may block it.",
    )
    variant_expectations = JSONText(
        label="Expectations on single perturbations",
        help_text='Optional JSON list, e.g. [{"operator": "shift_days", "args": {"days": 32}, '
        '"proposition": "continuation_rule", "state": "unknown"}].',
    )

    def __init__(self, *args: Any, decision_type: Any, propositions: list[str], **kwargs: Any):
        super().__init__(*args, **kwargs)
        corpus = cast(forms.ModelChoiceField, self.fields["corpus"])
        corpus.queryset = decision_type.corpora.live().order_by("name")
        self.propositions = propositions
        choices = [(NOT_CHECKED, "not checked"), *((s, s) for s in SLOT_STATES)]
        blocking = cast(forms.MultipleChoiceField, self.fields["expected_blocking"])
        blocking.choices = [(key, key) for key in propositions]
        # Each proposition's row of the slot table: state, `required`, resource ids.
        self.slot_field_names: set[str] = set()
        for key in propositions:
            row = {
                f"expect_{key}": forms.ChoiceField(
                    label=f"Expected: {key}", choices=choices, required=False
                ),
                f"required_{key}": forms.ChoiceField(
                    label=f"Required: {key}", choices=REQUIRED_CHOICES, required=False
                ),
                f"check_resources_{key}": forms.BooleanField(
                    label=f"Check the resource ids of {key}", required=False
                ),
                f"resources_{key}": ListField(label=f"Resource ids: {key}"),
            }
            self.fields.update(row)
            self.slot_field_names.update(row)

    def clean(self) -> dict[str, Any]:
        # What is typed or ticked under an unticked "check" box would be dropped silently.
        super().clean()
        data = self.cleaned_data
        if data.get("expected_blocking") and not data.get("check_blocking"):
            self.add_error("check_blocking", UNCHECKED_BLOCKING)
        for key in self.propositions:
            if data.get(f"resources_{key}") and not data.get(f"check_resources_{key}"):
                self.add_error(f"resources_{key}", UNCHECKED_RESOURCES.format(key=key))
        return data

    def grid_fields(self) -> list[Any]:
        """The visible fields shown in the grid: all but the pins and the slot table's."""
        apart = {*PIN_FIELDS, *self.slot_field_names}
        return [field for field in self.visible_fields() if field.name not in apart]

    def slot_rows(self) -> list[dict[str, Any]]:
        """One row per proposition: its expected state, `required` and resource ids."""
        return [
            {
                "key": key,
                "state": self[f"expect_{key}"],
                "required": self[f"required_{key}"],
                "check_resources": self[f"check_resources_{key}"],
                "resources": self[f"resources_{key}"],
            }
            for key in self.propositions
        ]

    @classmethod
    def initial_for(cls, scenario: Scenario) -> dict[str, Any]:
        initial: dict[str, Any] = {f: getattr(scenario, f) for f in SCENARIO_REQUEST_FIELDS}
        initial["corpus"] = scenario.corpus_id
        initial["lock_version"] = scenario.lock_version
        initial["check_admitted"] = scenario.expected_admitted is not None
        initial["expected_admitted"] = scenario.expected_admitted or []
        initial["check_rejected"] = scenario.expected_rejected is not None
        initial["expected_rejected"] = scenario.expected_rejected or []
        initial["variant_expectations"] = scenario.variant_expectations or None
        for key, state in scenario.expected_slots.items():
            initial[f"expect_{key}"] = state
        ready = scenario.expected_decision_ready
        initial["expected_decision_ready"] = (
            NOT_CHECKED if ready is None else "ready" if ready else "not_ready"
        )
        initial["check_blocking"] = scenario.expected_blocking is not None
        initial["expected_blocking"] = scenario.expected_blocking or []
        for key, required in (scenario.expected_required or {}).items():
            initial[f"required_{key}"] = "required" if required else "optional"
        for key, ids in (scenario.expected_resource_ids or {}).items():
            initial[f"check_resources_{key}"] = True
            initial[f"resources_{key}"] = ids
        return initial

    @staticmethod
    def pinned_propositions(scenario: Scenario) -> list[str]:
        """Propositions the scenario expects something of, current or not: each keeps its
        row (and its checkbox) in the form."""
        keys = [*scenario.expected_slots, *(scenario.expected_blocking or ())]
        keys += [*(scenario.expected_required or {}), *(scenario.expected_resource_ids or {})]
        return list(dict.fromkeys(keys))

    def service_fields(self) -> dict[str, Any]:
        data = self.cleaned_data
        fields = {k: data[k] for k in SCENARIO_REQUEST_FIELDS}
        fields["expected_slots"] = {
            key: data[f"expect_{key}"] for key in self.propositions if data.get(f"expect_{key}")
        }
        fields["expected_admitted"] = (
            data["expected_admitted"] if data.get("check_admitted") else None
        )
        fields["expected_rejected"] = (
            data["expected_rejected"] if data.get("check_rejected") else None
        )
        fields["expected_decision_ready"] = DECISION_READY_VALUES.get(
            data.get("expected_decision_ready") or NOT_CHECKED
        )
        fields["expected_blocking"] = (
            list(data["expected_blocking"]) if data.get("check_blocking") else None
        )
        fields["expected_required"] = {
            key: REQUIRED_VALUES[data[f"required_{key}"]]
            for key in self.propositions
            if data.get(f"required_{key}")
        }
        fields["expected_resource_ids"] = {
            key: data[f"resources_{key}"]
            for key in self.propositions
            if data.get(f"check_resources_{key}")
        }
        fields["variant_expectations"] = data.get("variant_expectations") or []
        return fields
