"""The scenario pages' forms, one module per concern: `inputs` (ISO dates, JSON text areas),
`corpora` (importing a corpus, editing a candidate), `scenario` (a scenario and its pinned
expectations), `runs` (starting a run, adding a proposed scenario), `filters` (the lists'
filters). Forms parse input; `scenarios.services` decides and writes. Callers import from here."""

from __future__ import annotations

from .corpora import (
    CANDIDATE_FIELDS,
    DATALISTS,
    LIST_FIELDS,
    UNREADABLE,
    UPLOAD_TOO_LARGE,
    CandidateForm,
    ImportForm,
)
from .filters import BAD_FILTER, CandidateFilterForm, ScenarioFilterForm, filter_values
from .inputs import IsoDateField, IsoDateInput, JSONText
from .runs import ProposalForm, RunForm
from .scenario import (
    DECISION_READY_CHOICES,
    DECISION_READY_VALUES,
    NO_ROLES,
    NOT_CHECKED,
    PIN_FIELDS,
    REQUIRED_CHOICES,
    REQUIRED_VALUES,
    UNCHECKED_BLOCKING,
    UNCHECKED_RESOURCES,
    ScenarioForm,
)

__all__ = [
    "BAD_FILTER",
    "CandidateFilterForm",
    "ScenarioFilterForm",
    "filter_values",
    "CANDIDATE_FIELDS",
    "DATALISTS",
    "DECISION_READY_CHOICES",
    "DECISION_READY_VALUES",
    "LIST_FIELDS",
    "NOT_CHECKED",
    "NO_ROLES",
    "PIN_FIELDS",
    "REQUIRED_CHOICES",
    "REQUIRED_VALUES",
    "UNCHECKED_BLOCKING",
    "UNCHECKED_RESOURCES",
    "UNREADABLE",
    "UPLOAD_TOO_LARGE",
    "CandidateForm",
    "ImportForm",
    "IsoDateField",
    "IsoDateInput",
    "JSONText",
    "ProposalForm",
    "RunForm",
    "ScenarioForm",
]
