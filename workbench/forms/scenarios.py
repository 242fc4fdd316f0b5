"""Forms parse input; `scenarios.services` decides and writes."""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.conf import settings
from django.template.defaultfilters import filesizeformat

from compiler import ALL_ENTITIES, OrderRole, Requirement
from scenarios.compiling import NOT_JSON, CorpusInvalid, CorpusProblem, read_json
from scenarios.models import SLOT_STATES, Corpus, CorpusCandidate, Scenario
from scenarios.services import (
    CONTROL_CHARACTER,
    SCENARIO_REQUEST_FIELDS,
    corpus_read,
    has_control_character,
)

from .fields import ListField, LockVersionField

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
UPLOAD_TOO_LARGE = (
    "This file is {size}; corpora of at most {limit} are accepted "
    "(the CORPUS_UPLOAD_MAX_BYTES setting)."
)
NO_ROLES = "Give at least one role the principal holds, separated by commas."
UNREADABLE = "This cannot be imported: {problem}"


def _located(problem: CorpusProblem) -> str:
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
                [NOT_JSON.format(error=_located(problem)) for problem in exc.problems]
            ) from None


class ImportForm(forms.Form):
    name = forms.CharField(
        max_length=120, strip=True, help_text="The corpus's name within this decision type."
    )
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    file = forms.FileField(required=False, help_text="A JSON file: {directory, candidates}.")
    text = forms.CharField(
        required=False,
        label="…or paste the JSON",
        widget=forms.Textarea(attrs={"rows": 8, "spellcheck": "false"}),
    )
    replace = forms.BooleanField(
        required=False, help_text="Replace the candidates of an existing corpus of this name."
    )
    strict = forms.BooleanField(
        required=False,
        help_text="Refuse the import when a class or proposition is unknown to the catalogue "
        "or the contract (otherwise they are listed as warnings).",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.max_bytes = settings.CORPUS_UPLOAD_MAX_BYTES
        self.fields["file"].help_text = (
            f"A JSON file: {{directory, candidates}}, UTF-8, at most "
            f"{filesizeformat(self.max_bytes)}."
        )

    def clean_name(self) -> str:
        name = self.cleaned_data["name"]
        if has_control_character(name):
            raise forms.ValidationError(CONTROL_CHARACTER)
        return name

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        upload = data.get("file")
        if upload and upload.size > self.max_bytes:
            # Refused before reading: a large upload is never held in memory whole.
            raise forms.ValidationError(
                UPLOAD_TOO_LARGE.format(
                    size=filesizeformat(upload.size), limit=filesizeformat(self.max_bytes)
                )
            )
        raw = upload.read() if upload else data.get("text", "")
        if not raw.strip():
            raise forms.ValidationError("Choose a file or paste the JSON.")
        try:
            data["document"] = corpus_read(raw, max_bytes=self.max_bytes)
        except CorpusInvalid as exc:
            raise forms.ValidationError(
                [UNREADABLE.format(problem=_located(problem)) for problem in exc.problems]
            ) from None
        return data


# The candidate fields the form shows one by one; the rest travel in "other fields".
CANDIDATE_FIELDS = (
    "id",
    "entity",
    "evidence_class",
    "allowed_roles",
    "allowed_purposes",
    "supports",
    "contradicts",
    "valid_from",
    "valid_to",
    "superseded",
    "superseded_by",
    "tokens",
    "relevance",
    "role",
    "requirement",
    "content",
)
LIST_FIELDS = ("allowed_roles", "allowed_purposes", "supports", "contradicts")
# Free-text fields offered the values the workbench knows (`selectors.KnownValues`) in a
# <datalist>: a suggestion, never a restriction, since a new value may be right.
DATALISTS = {
    "evidence_class": "evidence_classes",
    "supports": "propositions",
    "contradicts": "propositions",
    "allowed_roles": "roles",
    "allowed_purposes": "purposes",
}


class CandidateForm(forms.Form):
    lock_version = LockVersionField()
    # Ids are data: kept exactly as typed, spaces included.
    id = forms.CharField(max_length=200, strip=False)
    entity = forms.CharField(
        max_length=200,
        help_text=f"An entity id, or {ALL_ENTITIES} for every entity of the directory.",
    )
    evidence_class = forms.CharField(max_length=64)
    allowed_roles = ListField()
    allowed_purposes = ListField()
    supports = ListField()
    contradicts = ListField()
    valid_from = IsoDateField()
    valid_to = IsoDateField(required=False, help_text="The last valid day.")
    superseded = forms.BooleanField(required=False)
    superseded_by = forms.CharField(required=False, max_length=200)
    tokens = forms.IntegerField(min_value=0)
    relevance = forms.FloatField(min_value=0, max_value=1)
    role = forms.ChoiceField(choices=[(r.value, r.value) for r in OrderRole], initial="evidence")
    requirement = forms.ChoiceField(
        choices=[(r.value, r.value) for r in Requirement], initial="preferred"
    )
    content = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}))
    other = JSONText(
        label="Other fields (JSON)",
        help_text="denied_roles, denied_principals, forms, floor, depends_on, group, "
        "group_required, source.",
    )

    def __init__(self, *args: Any, known: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # {datalist id: values} for the template; each field names its list.
        self.datalists: dict[str, list[str]] = {}
        if known is not None:
            for name, attribute in DATALISTS.items():
                list_id = "known-" + attribute.replace("_", "-")
                self.fields[name].widget.attrs["list"] = list_id
                self.datalists[list_id] = sorted(getattr(known, attribute))

    @classmethod
    def for_candidate(cls, row: CorpusCandidate | None, known: Any = None) -> CandidateForm:
        if row is None:
            return cls(known=known)
        data = row.data
        initial = {k: data.get(k) for k in CANDIDATE_FIELDS if k in data}
        other = {k: v for k, v in data.items() if k not in CANDIDATE_FIELDS}
        initial["other"] = other or None
        initial["lock_version"] = row.lock_version
        return cls(initial=initial, known=known)

    def clean_other(self) -> Any:
        other = self.cleaned_data.get("other")
        if other is not None and not isinstance(other, dict):
            raise forms.ValidationError("Give the other fields as a JSON object.")
        return other

    def candidate(self) -> dict[str, Any]:
        """The candidate as the compiler's JSON."""
        data = self.cleaned_data
        candidate: dict[str, Any] = {}
        for key in CANDIDATE_FIELDS:
            value = data.get(key)
            if key in ("valid_from", "valid_to") and value is not None:
                value = value.isoformat()
            if key in ("valid_to", "superseded_by") and not value:
                continue
            candidate[key] = value
        candidate.update(data.get("other") or {})
        return candidate


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
        self.fields["corpus"].queryset = decision_type.corpora.live().order_by("name")
        self.propositions = propositions
        choices = [(NOT_CHECKED, "not checked"), *((s, s) for s in SLOT_STATES)]
        self.fields["expected_blocking"].choices = [(key, key) for key in propositions]
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
        data = super().clean()
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


class RunForm(forms.Form):
    version = forms.TypedChoiceField(coerce=int, choices=())
    scenario = forms.IntegerField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args: Any, decision_type: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.fields["version"].choices = [
            (v.number, f"v{v.number} ({v.get_status_display().lower()})")
            for v in decision_type.versions.order_by("-number")
        ]


class ProposalForm(forms.Form):
    """ "Add this scenario" on the Suite strength panel: which run, which surviving mutant."""

    run = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    mutant = forms.CharField(max_length=300, widget=forms.HiddenInput)
