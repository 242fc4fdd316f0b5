"""Keys and their validators, the source-class catalogue and proposals to change it."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.validators import MaxLengthValidator, RegexValidator
from django.db import models
from django.db.models import Q

from compiler import OrderRole

KEY_PATTERN = r"^[a-z][a-z0-9_]*$"
DOTTED_KEY_PATTERN = r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$"

KEY_HELP = "Lower-case letters, digits and underscores, starting with a letter."
DOTTED_KEY_HELP = "Lower-case words joined by dots, e.g. credit.review.continuation."

key_validator = RegexValidator(KEY_PATTERN, KEY_HELP)
dotted_key_validator = RegexValidator(DOTTED_KEY_PATTERN, DOTTED_KEY_HELP)

DEFAULT_ROLE_ORDER: list[str] = [str(role) for role in OrderRole]


def default_role_order() -> list[str]:
    return list(DEFAULT_ROLE_ORDER)


# A source class's description is read in lists by everyone: a paragraph, not a document.
DESCRIPTION_MAX_LENGTH = 2000


class CatalogueFieldValues:
    """For a source class and a proposal for one: the values a catalogue change may set."""

    def field_values(self) -> dict[str, Any]:
        return {field: getattr(self, field) for field in SOURCE_CLASS_FIELDS}


class SourceClass(CatalogueFieldValues, models.Model):
    """A kind of evidence, e.g. `approved_waiver`. Candidates carry exactly one."""

    class AuthorityTier(models.IntegerChoices):
        SYSTEM_OF_RECORD = 1, "System of record"
        APPROVED_INSTRUMENT = 2, "Approved instrument"
        CONTROLLED_DOCUMENT = 3, "Controlled document"
        INFORMAL = 4, "Informal"

    key = models.CharField(
        max_length=64, unique=True, validators=[key_validator], help_text=KEY_HELP
    )
    label = models.CharField(max_length=120)
    description = models.TextField(
        blank=True,
        max_length=DESCRIPTION_MAX_LENGTH,
        validators=[MaxLengthValidator(DESCRIPTION_MAX_LENGTH)],
    )
    authority_tier = models.PositiveSmallIntegerField(
        choices=AuthorityTier.choices, default=AuthorityTier.CONTROLLED_DOCUMENT
    )
    weak = models.BooleanField(
        default=False,
        help_text="Never establishes an approval-like proposition (a case note, an email).",
    )
    retired = models.BooleanField(
        default=False,
        help_text="No system produces this class any more, so no candidate can carry it.",
    )
    lock_version = models.PositiveIntegerField(default=0, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["key"]
        # The catalogue is shared by every decision type, so changing it is a site-wide role
        # of its own (Catalogue managers), not something every policy owner may do.
        permissions = [("manage_catalogue", "Can create, change and retire source classes")]

    def __str__(self) -> str:
        return self.key


# The fields of a source class a catalogue change may set (the key is fixed once created).
SOURCE_CLASS_FIELDS: tuple[str, ...] = (
    "label",
    "description",
    "authority_tier",
    "weak",
    "retired",
)


def source_class_changes(
    before: dict[str, Any], after: dict[str, Any]
) -> dict[str, tuple[Any, Any]]:
    """The fields whose value differs, as (before, after), in the catalogue's field order."""
    return {
        field: (before.get(field), after[field])
        for field in SOURCE_CLASS_FIELDS
        if before.get(field) != after[field]
    }


class SourceClassProposal(CatalogueFieldValues, models.Model):
    """A policy owner's proposed catalogue change, decided by a catalogue manager.

    `source_class` is the class to change, or null for a proposed new class (then `key` is
    the new class's key). `proposed_fields` names the fields the proposer changed; accepting
    sets those (and only those: a later edit of another field is kept) to the values stored
    here, rejecting records why."""

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        ACCEPTED = "accepted", "Accepted"
        REJECTED = "rejected", "Rejected"

    source_class = models.ForeignKey(
        SourceClass, on_delete=models.PROTECT, null=True, blank=True, related_name="proposals"
    )
    key = models.CharField(max_length=64, validators=[key_validator], help_text=KEY_HELP)
    label = models.CharField(max_length=120)
    description = models.TextField(
        blank=True,
        max_length=DESCRIPTION_MAX_LENGTH,
        validators=[MaxLengthValidator(DESCRIPTION_MAX_LENGTH)],
    )
    authority_tier = models.PositiveSmallIntegerField(
        choices=SourceClass.AuthorityTier.choices,
        default=SourceClass.AuthorityTier.CONTROLLED_DOCUMENT,
    )
    weak = models.BooleanField(default=False)
    retired = models.BooleanField(default=False)
    proposed_fields = models.JSONField(default=list, blank=True)
    reason = models.TextField(blank=True, help_text="Why the catalogue should change.")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)
    proposed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    proposed_at = models.DateTimeField(auto_now_add=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    note = models.TextField(blank=True, help_text="The catalogue manager's reason.")

    class Meta:
        ordering = ["-proposed_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["open", "accepted", "rejected"]),
                name="source_class_proposal_status",
            ),
            # A decided proposal says who decided it and when; an open one does not.
            models.CheckConstraint(
                condition=Q(status="open", decided_at__isnull=True)
                | (~Q(status="open") & Q(decided_at__isnull=False, decided_by__isnull=False)),
                name="source_class_proposal_decided",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.key} ({self.status})"

    @property
    def is_open(self) -> bool:
        return self.status == self.Status.OPEN

    def applied_to(self, current: dict[str, Any]) -> dict[str, Any]:
        """The class's field values once this proposal is applied to `current` ({} for a
        proposed new class)."""
        fields = SOURCE_CLASS_FIELDS if self.source_class_id is None else self.proposed_fields
        return {**current, **{field: getattr(self, field) for field in fields}}
