"""Decision types, contract versions (statuses, the frozen rule) and their propositions."""

from __future__ import annotations

from typing import Any, ClassVar

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from .catalogue import (
    DOTTED_KEY_HELP,
    KEY_HELP,
    default_role_order,
    dotted_key_validator,
    key_validator,
)


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

# A version that was published never changes again: its content is what its bundle signed.
# Only its status moves on (published -> superseded or retired, superseded -> retired).
FROZEN_VERSION_STATUSES: tuple[str, ...] = ("published", "superseded", "retired")
FROZEN_MOVES: dict[str, frozenset[str]] = {
    "published": frozenset({"published", "superseded", "retired"}),
    "superseded": frozenset({"superseded", "retired"}),
    "retired": frozenset({"retired"}),
}
VERSION_FROZEN = "Version {number} is {status}: a published contract never changes."


class VersionFrozen(Exception):
    """A write to a published (or superseded, or retired) version, refused by the model.

    The services refuse first with a readable `ValidationError`; this is the backstop for
    code that saves a model directly."""


class ContractVersionQuerySet(models.QuerySet["ContractVersion"]):
    def update(self, **kwargs: Any) -> int:
        moves_only = set(kwargs) <= {"status", "updated_at"} and kwargs.get("status") in (
            None,
            "superseded",
            "retired",
        )
        if not moves_only:
            frozen = self.filter(status__in=FROZEN_VERSION_STATUSES).first()
            if frozen is not None:
                raise VersionFrozen(
                    VERSION_FROZEN.format(number=frozen.number, status=frozen.status)
                )
        return super().update(**kwargs)

    def delete(self) -> tuple[int, dict[str, int]]:
        frozen = self.filter(status__in=FROZEN_VERSION_STATUSES).first()
        if frozen is not None:
            raise VersionFrozen(VERSION_FROZEN.format(number=frozen.number, status=frozen.status))
        return super().delete()


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

    # Which statuses may be edited, in one place (services, selectors, views and templates
    # ask the properties below). In these the rows are the contract and the editor shows
    # its forms.
    EDITABLE_STATUSES: ClassVar[frozenset[str]] = frozenset(
        {Status.DRAFT, Status.CHANGES_REQUESTED}
    )
    # A version on its way to publication (submitted, approved, or sent back) returns to
    # draft when its owner edits it: the four-eyes rule voids every approval given so far.
    REOPENABLE_STATUSES: ClassVar[frozenset[str]] = frozenset(
        {Status.IN_REVIEW, Status.APPROVED, Status.CHANGES_REQUESTED}
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

    # The assembly policy, one field per field of compiler.Policy (`POLICY_FIELDS`).
    policy_name = models.CharField(max_length=64, default="default", validators=[key_validator])
    # Bounded here, not only by the database: SQLite takes 64-bit values, a bundle's
    # RFC 8785 hash none beyond 2**53 - 1.
    policy_version = models.PositiveIntegerField(
        default=1, validators=[MinValueValidator(1), MaxValueValidator(2**31 - 1)]
    )
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

    objects = ContractVersionQuerySet.as_manager()

    # The policy fields, in one list: model field -> key of the contract document's `policy`.
    POLICY_FIELDS: ClassVar[dict[str, str]] = {
        "policy_name": "name",
        "policy_version": "version",
        "min_relevance": "min_relevance",
        "mandatory_form": "mandatory_form",
        "role_order": "role_order",
        "on_overrun": "on_overrun",
    }
    # What the editor's settings form changes: the purposes and part of the policy.
    SETTINGS_FIELDS: ClassVar[tuple[str, ...]] = (
        "purposes",
        "policy_name",
        "policy_version",
        "min_relevance",
        "role_order",
    )
    # What a new draft copies from its parent, besides the propositions.
    COPIED_FIELDS: ClassVar[tuple[str, ...]] = ("purposes", *POLICY_FIELDS)

    # Everything but `status` and `updated_at`: what a frozen version may never change.
    CONTENT_FIELDS: ClassVar[tuple[str, ...]] = (
        "decision_type_id",
        "number",
        "parent_id",
        *COPIED_FIELDS,
        "snapshot",
        "sha256",
        "lock_version",
        "created_by_id",
    )

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
        """The rows are the contract: the owner edits them in the editor."""
        return self.status in self.EDITABLE_STATUSES

    @property
    def needs_reopening(self) -> bool:
        """In review or approved: an owner's edit first returns it to draft (from the review
        page, or by editing through the services), voiding its approvals."""
        return self.status in self.REOPENABLE_STATUSES and not self.is_editable

    @property
    def accepts_edits(self) -> bool:
        """What the edit services accept: editable, or open and returned to draft first."""
        return self.is_editable or self.status in self.REOPENABLE_STATUSES

    @property
    def is_published(self) -> bool:
        return self.status == self.Status.PUBLISHED

    def policy_document(self) -> dict[str, Any]:
        """The contract document's `policy`, built from `POLICY_FIELDS`."""
        return {
            key: list(value) if isinstance(value := getattr(self, field), list) else value
            for field, key in self.POLICY_FIELDS.items()
        }

    @classmethod
    def policy_values(cls, policy: dict[str, Any]) -> dict[str, Any]:
        """The inverse: the model fields for a contract document's `policy` (a bundle's)."""
        return {
            field: list(policy[key]) if isinstance(policy[key], list) else policy[key]
            for field, key in cls.POLICY_FIELDS.items()
        }

    @property
    def is_frozen(self) -> bool:
        return self.status in FROZEN_VERSION_STATUSES

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding and self.pk is not None:
            stored = (
                type(self).objects.filter(pk=self.pk).values("status", *self.CONTENT_FIELDS).first()
            )
            if stored is not None and stored["status"] in FROZEN_VERSION_STATUSES:
                changed = [f for f in self.CONTENT_FIELDS if getattr(self, f) != stored[f]]
                if changed or self.status not in FROZEN_MOVES[stored["status"]]:
                    raise VersionFrozen(
                        VERSION_FROZEN.format(number=stored["number"], status=stored["status"])
                    )
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        if type(self).objects.filter(pk=self.pk, status__in=FROZEN_VERSION_STATUSES).exists():
            raise VersionFrozen(VERSION_FROZEN.format(number=self.number, status=self.status))
        return super().delete(*args, **kwargs)


def _frozen_version_of(version_ids: Any) -> ContractVersion | None:
    return ContractVersion.objects.filter(
        pk__in=version_ids, status__in=FROZEN_VERSION_STATUSES
    ).first()


class PropositionQuerySet(models.QuerySet["Proposition"]):
    def update(self, **kwargs: Any) -> int:
        _refuse_frozen(self.values("version_id"))
        return super().update(**kwargs)

    def delete(self) -> tuple[int, dict[str, int]]:
        _refuse_frozen(self.values("version_id"))
        return super().delete()


def _refuse_frozen(version_ids: Any) -> None:
    frozen = _frozen_version_of(version_ids)
    if frozen is not None:
        raise VersionFrozen(VERSION_FROZEN.format(number=frozen.number, status=frozen.status))


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
    max_items = models.PositiveSmallIntegerField(
        default=1, validators=[MinValueValidator(1), MaxValueValidator(32767)]
    )

    objects = PropositionQuerySet.as_manager()

    class Meta:
        ordering = ["position", "id"]
        constraints = [
            models.UniqueConstraint(fields=["version", "key"], name="proposition_key_unique"),
            models.CheckConstraint(condition=Q(max_items__gte=1), name="proposition_max_items"),
        ]

    def __str__(self) -> str:
        return self.key

    def save(self, *args: Any, **kwargs: Any) -> None:
        ids = [self.version_id]
        if not self._state.adding and self.pk is not None:
            # Moving a proposition out of a frozen version is a change to that version too.
            ids += list(Proposition.objects.filter(pk=self.pk).values_list("version_id", flat=True))
        _refuse_frozen(ids)
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        _refuse_frozen([self.version_id])
        return super().delete(*args, **kwargs)

    def clean(self) -> None:
        super().clean()
        classes = list(self.accepted_classes or [])
        if len(set(classes)) != len(classes):
            raise ValidationError({"accepted_classes": "A class can be accepted only once."})
