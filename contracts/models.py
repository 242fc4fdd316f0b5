"""Source classes, decision types, contract versions, their propositions and the audit log.

A contract version's editable draft lives in rows (the version's policy fields and its
`Proposition` rows); `contracts.documents` turns those rows into the compiler's `Contract`
document, the only place that shape is built. A version also keeps `snapshot`/`sha256`: the
last valid document built from its rows, which becomes the frozen content once a version
leaves the editable states (review and publishing build on that).
"""

from __future__ import annotations

from typing import Any, ClassVar

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from django.db.models import Q

from compiler.codes import OrderRole

KEY_PATTERN = r"^[a-z][a-z0-9_]*$"
DOTTED_KEY_PATTERN = r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$"

KEY_HELP = "Lower-case letters, digits and underscores, starting with a letter."
DOTTED_KEY_HELP = "Lower-case words joined by dots, e.g. credit.review.continuation."

key_validator = RegexValidator(KEY_PATTERN, KEY_HELP)
dotted_key_validator = RegexValidator(DOTTED_KEY_PATTERN, DOTTED_KEY_HELP)

DEFAULT_ROLE_ORDER: list[str] = [str(role) for role in OrderRole]


def default_role_order() -> list[str]:
    return list(DEFAULT_ROLE_ORDER)


class SourceClass(models.Model):
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
    description = models.TextField(blank=True)
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

    def __str__(self) -> str:
        return self.key


class DecisionType(models.Model):
    """A named kind of decision. Access is granted per object with django-guardian:

    `view_decisiontype` reads it, `change_decisiontype` edits its drafts (policy owners),
    `review_decisiontype` reviews its submitted versions (risk reviewers).
    """

    key = models.CharField(
        max_length=120, unique=True, validators=[dotted_key_validator], help_text=DOTTED_KEY_HELP
    )
    title = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["key"]
        permissions = [("review_decisiontype", "Can review contract versions")]

    def __str__(self) -> str:
        return self.key

    @property
    def permitted_purposes(self) -> list[str]:
        """The purposes of the type's latest contract version (purposes are versioned with it)."""
        latest = self.versions.order_by("-number").first()
        return list(latest.purposes) if latest else []


# At most one version per decision type is on its way to publication: a draft, in review,
# sent back with changes requested, or approved and waiting to be published.
OPEN_VERSION_STATUSES: tuple[str, ...] = ("draft", "in_review", "changes_requested", "approved")


class ContractVersion(models.Model):
    """One numbered version of a decision type's evidence contract."""

    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        IN_REVIEW = "in_review", "In review"
        CHANGES_REQUESTED = "changes_requested", "Changes requested"
        APPROVED = "approved", "Approved"
        PUBLISHED = "published", "Published"
        SUPERSEDED = "superseded", "Superseded"
        RETIRED = "retired", "Retired"

    # The owner may change the rows only in these states; everything else is frozen.
    EDITABLE_STATUSES: ClassVar[frozenset[str]] = frozenset(
        {Status.DRAFT, Status.CHANGES_REQUESTED}
    )
    OPEN_STATUSES: ClassVar[tuple[str, ...]] = OPEN_VERSION_STATUSES

    class MandatoryForm(models.TextChoices):
        CHEAPEST = "cheapest", "Cheapest form at or above the floor"

    class OnOverrun(models.TextChoices):
        DROP_LAST_DISCRETIONARY = "drop_last_discretionary", "Drop the last discretionary item"

    decision_type = models.ForeignKey(
        DecisionType, on_delete=models.PROTECT, related_name="versions"
    )
    number = models.PositiveIntegerField()
    status = models.CharField(max_length=24, choices=Status.choices, default=Status.DRAFT)
    parent = models.ForeignKey(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="children"
    )
    purposes = models.JSONField(default=list, blank=True)

    # The assembly policy, one field per field of compiler.models.Policy.
    policy_name = models.CharField(max_length=64, default="default", validators=[key_validator])
    policy_version = models.PositiveIntegerField(default=1, validators=[MinValueValidator(1)])
    min_relevance = models.FloatField(
        default=0.0, validators=[MinValueValidator(0.0), MaxValueValidator(1.0)]
    )
    mandatory_form = models.CharField(
        max_length=32, choices=MandatoryForm.choices, default=MandatoryForm.CHEAPEST
    )
    role_order = models.JSONField(default=default_role_order)
    on_overrun = models.CharField(
        max_length=32, choices=OnOverrun.choices, default=OnOverrun.DROP_LAST_DISCRETIONARY
    )

    # The last valid compiler document built from the rows, and its canonical hash.
    snapshot = models.JSONField(null=True, blank=True, editable=False)
    sha256 = models.CharField(max_length=64, blank=True, editable=False)

    # Optimistic locking: every edit form carries the value it was rendered with; an edit
    # whose value is stale is refused and the counter moves on each accepted edit.
    lock_version = models.PositiveIntegerField(default=0, editable=False)

    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["decision_type", "-number"]
        constraints = [
            models.UniqueConstraint(
                fields=["decision_type", "number"], name="contract_version_number_unique"
            ),
            models.CheckConstraint(
                condition=Q(number__gte=1), name="contract_version_number_positive"
            ),
            models.UniqueConstraint(
                fields=["decision_type"],
                condition=Q(status__in=OPEN_VERSION_STATUSES),
                name="contract_version_one_open_per_type",
            ),
            models.UniqueConstraint(
                fields=["decision_type"],
                condition=Q(status="published"),
                name="contract_version_one_published_per_type",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.decision_type.key} v{self.number}"

    @property
    def is_editable(self) -> bool:
        return self.status in self.EDITABLE_STATUSES


class Proposition(models.Model):
    """One fact a decision needs: a slot in the packet, with its accepted source classes."""

    version = models.ForeignKey(
        ContractVersion, on_delete=models.CASCADE, related_name="propositions"
    )
    position = models.PositiveIntegerField(default=0)
    key = models.CharField(max_length=64, validators=[key_validator], help_text=KEY_HELP)
    description = models.TextField(blank=True)
    # Source-class keys in precedence order: the first is preferred when several support it.
    accepted_classes = models.JSONField(default=list, blank=True)
    required = models.BooleanField(default=True, help_text="A gap blocks the decision.")
    max_items = models.PositiveSmallIntegerField(default=1, validators=[MinValueValidator(1)])

    class Meta:
        ordering = ["position", "id"]
        constraints = [
            models.UniqueConstraint(fields=["version", "key"], name="proposition_key_unique"),
            models.CheckConstraint(condition=Q(max_items__gte=1), name="proposition_max_items"),
        ]

    def __str__(self) -> str:
        return self.key

    def clean(self) -> None:
        super().clean()
        classes = list(self.accepted_classes or [])
        if len(set(classes)) != len(classes):
            raise ValidationError({"accepted_classes": "A class can be accepted only once."})


class AuditQuerySet(models.QuerySet["AuditEvent"]):
    def update(self, **kwargs: Any) -> int:
        raise TypeError("The audit log is append-only.")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise TypeError("The audit log is append-only.")


class AuditAction(models.TextChoices):
    SOURCE_CLASS_CREATED = "source_class.created", "Source class created"
    SOURCE_CLASS_UPDATED = "source_class.updated", "Source class updated"
    DECISION_TYPE_CREATED = "decision_type.created", "Decision type created"
    ACCESS_GRANTED = "access.granted", "Access granted"
    ACCESS_REVOKED = "access.revoked", "Access revoked"
    VERSION_CREATED = "version.created", "Version created"
    SETTINGS_UPDATED = "version.settings_updated", "Purposes and policy updated"
    PROPOSITION_ADDED = "proposition.added", "Proposition added"
    PROPOSITION_UPDATED = "proposition.updated", "Proposition updated"
    PROPOSITION_DELETED = "proposition.deleted", "Proposition deleted"
    PROPOSITION_MOVED = "proposition.moved", "Proposition moved"
    CLASS_ACCEPTED = "accepted_class.added", "Accepted class added"
    CLASS_MOVED = "accepted_class.moved", "Accepted class moved"
    CLASS_REMOVED = "accepted_class.removed", "Accepted class removed"


class AuditEvent(models.Model):
    """One change, written by the service that made it. Rows are never updated or deleted.

    `action` is a plain string (see `AuditAction`) so later features add actions without a
    migration; `changes` holds what the change needs to be understood later (before/after).
    """

    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, related_name="+"
    )
    action = models.CharField(max_length=64)
    decision_type = models.ForeignKey(
        DecisionType, on_delete=models.PROTECT, null=True, blank=True, related_name="audit_events"
    )
    version = models.ForeignKey(
        ContractVersion,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="audit_events",
    )
    summary = models.CharField(max_length=300)
    changes = models.JSONField(default=dict, blank=True)

    objects = AuditQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["decision_type", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.action}: {self.summary}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise TypeError("The audit log is append-only.")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise TypeError("The audit log is append-only.")

    @property
    def action_label(self) -> str:
        try:
            return AuditAction(self.action).label
        except ValueError:
            return self.action
