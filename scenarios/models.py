"""Fixture corpora, scenarios and the runs that compile them against a contract version.

The suite's runs and their results are in `run_models`, suite-strength runs in
`strength_models`; both are re-exported here, where Django finds them.

A corpus holds candidates and a directory in the compiler's interchange format; a scenario
is a request over one corpus with the slot states it expects; a run compiles every scenario
of a decision type (or one) against one contract version, the base and each perturbation of
the standard suite, and keeps one `ScenarioResult` per compile.

Rows point one way: scenarios → contracts (decision type, version). The contracts app knows
nothing of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from compiler import REFUSED, SlotState
from contracts.models import DecisionType

from .expectations import PIN_FIELDS, clean_pins

if TYPE_CHECKING:
    from .corpus_input import CorpusProblem

# What a slot can read in a stored result, and so what a scenario may expect of it: the
# compiler's slot states, then `refused` (every slot of a refused compile reads so). The one
# list: services validate expectations with it, the forms offer it, the coverage counts it.
SLOT_STATES: tuple[str, ...] = (*(state.value for state in SlotState), REFUSED)


class ArchivableQuerySet(models.QuerySet):
    """`live()` is what lists, suite runs, impact reports, exports and strength runs see;
    `archived()` the rows an owner archived (kept for audit and for the runs that used them,
    restorable)."""

    def live(self) -> ArchivableQuerySet:
        return self.filter(archived_at__isnull=True)

    def archived(self) -> ArchivableQuerySet:
        return self.filter(archived_at__isnull=False)


class Archivable(models.Model):
    """Nothing made by mistake is deleted: it is archived, by whom and when."""

    archived_at = models.DateTimeField(null=True, blank=True, db_index=True)
    archived_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
    )

    objects = ArchivableQuerySet.as_manager()

    class Meta:
        abstract = True

    @property
    def is_archived(self) -> bool:
        return self.archived_at is not None


class Corpus(Archivable):
    """A named pool of candidates for one decision type, with its entity/role directory."""

    # Not stored: what the import service warned about, on the row it returns.
    warnings: list[CorpusProblem]

    decision_type = models.ForeignKey(
        DecisionType, on_delete=models.PROTECT, related_name="corpora"
    )
    name = models.CharField(max_length=120)
    description = models.TextField(blank=True)
    # compiler.Directory as JSON: {"entities": {...}, "role_parents": {...}}.
    directory = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["decision_type", "name"]
        verbose_name_plural = "corpora"
        constraints = [
            models.UniqueConstraint(fields=["decision_type", "name"], name="corpus_name_unique")
        ]

    def __str__(self) -> str:
        return f"{self.decision_type.key}: {self.name}"


class CorpusCandidate(Archivable):
    """One candidate, stored as the compiler's JSON (defaults left out) under its id."""

    # Not stored: what the service that saved it warned about, on the row it returns.
    warnings: list[CorpusProblem]

    corpus = models.ForeignKey(Corpus, on_delete=models.CASCADE, related_name="candidates")
    position = models.PositiveIntegerField(default=0)
    candidate_id = models.CharField(max_length=200)
    data = models.JSONField()
    # Optimistic locking: the edit form carries it, every edit increments it (a stale form
    # is refused). A replaced corpus carries each candidate's counter over.
    lock_version = models.PositiveIntegerField(default=0, editable=False)

    class Meta:
        ordering = ["position", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["corpus", "candidate_id"], name="corpus_candidate_id_unique"
            )
        ]

    def __str__(self) -> str:
        return self.candidate_id


class Scenario(Archivable):
    """A stored request over one corpus, with the slot states it is expected to produce."""

    decision_type = models.ForeignKey(
        DecisionType, on_delete=models.PROTECT, related_name="scenarios"
    )
    corpus = models.ForeignKey(Corpus, on_delete=models.PROTECT, related_name="scenarios")
    name = models.CharField(max_length=160)
    description = models.TextField(blank=True)
    position = models.PositiveIntegerField(default=0)

    # The request fields (decision_type comes from the scenario's decision type).
    principal = models.CharField(max_length=120)
    roles = models.JSONField(default=list, blank=True)
    purpose = models.CharField(max_length=120)
    entity = models.CharField(max_length=200)
    decision_date = models.DateField()
    # Bounded here, not only by the database: SQLite takes 64-bit values, a bundle's
    # RFC 8785 hash none beyond 2**53 - 1.
    token_budget = models.PositiveIntegerField(
        validators=[MinValueValidator(0), MaxValueValidator(2**31 - 1)]
    )
    # compiler.Delegation as JSON, or null.
    delegation = models.JSONField(null=True, blank=True)
    named = models.JSONField(default=list, blank=True)

    # {"proposition": one of SLOT_STATES}; a proposition left out is not checked.
    expected_slots = models.JSONField(default=dict, blank=True)
    # Optional: the exact admitted ids / rejected ids, or null for "not checked".
    expected_admitted = models.JSONField(null=True, blank=True)
    expected_rejected = models.JSONField(null=True, blank=True)
    # Pins on the output's meaning (`scenarios.expectations`; the `expected:` mapping of a
    # contract-test file): whether the decision is ready (null: not checked), exactly which
    # propositions block it (null: not checked), each named slot's `required` flag
    # {"proposition": true | false} and its resource ids in order {"proposition": [ids]}
    # (a proposition left out is not checked).
    expected_decision_ready = models.BooleanField(null=True, blank=True)
    expected_blocking = models.JSONField(null=True, blank=True)
    expected_required = models.JSONField(default=dict, blank=True)
    expected_resource_ids = models.JSONField(default=dict, blank=True)
    # Owners' expectations on single perturbations: a list of
    # compiler.VariantExpectation dicts ({operator, args, proposition, state}).
    variant_expectations = models.JSONField(default=list, blank=True)

    # Optimistic locking: the edit and "take as expected" forms carry it, every change
    # increments it, and a stale form is refused.
    lock_version = models.PositiveIntegerField(default=0, editable=False)

    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["position", "name", "id"]
        constraints = [
            models.UniqueConstraint(fields=["decision_type", "name"], name="scenario_name_unique")
        ]
        # A type's scenarios in suite order: a page of the list (and a run's order) is read
        # from the index, not sorted from all of them.
        indexes = [
            models.Index(
                fields=["decision_type", "position", "name", "id"], name="scenario_suite_order"
            ),
            # Counted without reading the rows (PostgreSQL's index-only scans): a type's live
            # and archived scenarios (the suite page), with what the impact page's
            # fingerprint sums; and each corpus's live scenarios (its "used by").
            models.Index(
                fields=["decision_type", "archived_at", "updated_at", "id"],
                name="scenario_type_archived",
            ),
            models.Index(fields=["corpus", "archived_at"], name="scenario_corpus_archived"),
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        # The pins' shape (a list, booleans, no duplicate); the services also check their
        # propositions against the decision type's (`scenarios.expectations.clean_pins`).
        pins = clean_pins({field: getattr(self, field) for field in PIN_FIELDS}, None)
        for field, value in pins.items():
            setattr(self, field, value)

    def request_document(self) -> dict[str, Any]:
        """The request as the compiler's JSON."""
        return {
            "decision_type": self.decision_type.key,
            "principal": self.principal,
            "roles": list(self.roles),
            "purpose": self.purpose,
            "entity": self.entity,
            "decision_date": self.decision_date.isoformat(),
            "token_budget": self.token_budget,
            "delegation": self.delegation,
            "named": list(self.named),
        }


# Defined in modules of their own; imported here so Django registers them with this app.
from .run_models import (  # noqa: E402, F401
    ScenarioResult,
    SuiteRun,
    SuiteRunChunk,
    SuiteRunReportPart,
    SuiteRunReportPiece,
)
from .strength_models import MutationRun  # noqa: E402, F401
