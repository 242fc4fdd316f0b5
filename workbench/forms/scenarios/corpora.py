"""A corpus imported from a JSON file or text, and one candidate of it edited."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.template.defaultfilters import filesizeformat

from compiler import ALL_ENTITIES, OrderRole, Requirement
from scenarios.compiling import CorpusInvalid
from scenarios.models import CorpusCandidate
from scenarios.services import CONTROL_CHARACTER, corpus_read, has_control_character
from workbench.forms.fields import ListField, LockVersionField

from .inputs import IsoDateField, JSONText, located

UPLOAD_TOO_LARGE = (
    "This file is {size}; corpora of at most {limit} are accepted "
    "(the CORPUS_UPLOAD_MAX_BYTES setting)."
)
UNREADABLE = "This cannot be imported: {problem}"


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
        super().clean()
        data = self.cleaned_data
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
                [UNREADABLE.format(problem=located(problem)) for problem in exc.problems]
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
    superseded_by = forms.CharField(
        required=False,
        max_length=200,
        help_text="The id of the candidate that replaces this one, in this corpus or not: "
        "either way this one is superseded.",
    )
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
        "group_required, source. A depends_on id outside this corpus keeps this candidate "
        "out of the packet (dependency_absent).",
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
