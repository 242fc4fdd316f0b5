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
    description = models.TextField(blank=True)
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

    # The assembly policy, one field per field of compiler.models.Policy (`POLICY_FIELDS`).
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


class AuditQuerySet(models.QuerySet["AuditEvent"]):
    def update(self, **kwargs: Any) -> int:
        raise TypeError("The audit log is append-only.")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise TypeError("The audit log is append-only.")


class AuditAction(models.TextChoices):
    SOURCE_CLASS_CREATED = "source_class.created", "Source class created"
    SOURCE_CLASS_UPDATED = "source_class.updated", "Source class updated"
    SOURCE_CLASS_PROPOSED = "source_class.proposed", "Source class change proposed"
    SOURCE_CLASS_PROPOSAL_ACCEPTED = (
        "source_class.proposal_accepted",
        "Source class proposal accepted",
    )
    SOURCE_CLASS_PROPOSAL_REJECTED = (
        "source_class.proposal_rejected",
        "Source class proposal rejected",
    )
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
    SUBMITTED = "version.submitted", "Submitted for review"
    RETURNED_TO_DRAFT = "version.returned_to_draft", "Returned to draft"
    APPROVED = "version.approved", "Approved"
    CHANGES_REQUESTED = "version.changes_requested", "Changes requested"
    PUBLISHED = "version.published", "Published"
    SUPERSEDED = "version.superseded", "Superseded"
    RETIRED = "version.retired", "Retired"
    BUNDLE_IMPORTED = "bundle.imported", "Bundle imported"
    SIGNING_KEY_CREATED = "signing_key.created", "Signing key created"
    VIOLATION_JUSTIFIED = "violation.justified", "Violation justified"
    SIGNING_KEY_REGISTERED = "signing_key.registered", "Signing key registered"
    SIGNING_KEY_REVOKED = "signing_key.revoked", "Signing key revoked"


# Changes to a version's content: whoever made one of these may not approve the version.
EDIT_ACTIONS: frozenset[str] = frozenset(
    {
        AuditAction.VERSION_CREATED,
        AuditAction.SETTINGS_UPDATED,
        AuditAction.PROPOSITION_ADDED,
        AuditAction.PROPOSITION_UPDATED,
        AuditAction.PROPOSITION_DELETED,
        AuditAction.PROPOSITION_MOVED,
        AuditAction.CLASS_ACCEPTED,
        AuditAction.CLASS_MOVED,
        AuditAction.CLASS_REMOVED,
    }
)


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

    @property
    def field_changes(self) -> list[tuple[str, Any, Any]]:
        """(field, before, after) for events whose `changes` map fields to values (a
        catalogue change); empty for the others."""
        before, after = self.changes.get("before"), self.changes.get("after")
        if not isinstance(before, dict) or not isinstance(after, dict):
            return []
        return [(field, before.get(field), value) for field, value in after.items()]


# --------------------------------------------------------------------------- review


class Review(models.Model):
    """One submission of a version for review, from submit until it is closed.

    A review is *active* while `closed_at` is null; the database keeps at most one active
    review per version. It closes when changes are requested, when the owner edits or
    withdraws the version (its approvals are voided), when the version is published, or
    when it is retired. Its state is derived from `closed_at` and `outcome`, not stored twice.
    """

    class Outcome(models.TextChoices):
        CHANGES_REQUESTED = "changes_requested", "Changes requested"
        RETURNED_TO_DRAFT = "returned_to_draft", "Returned to draft"
        PUBLISHED = "published", "Published"
        RETIRED = "retired", "Retired"

    version = models.ForeignKey(ContractVersion, on_delete=models.PROTECT, related_name="reviews")
    submitted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    submitted_at = models.DateTimeField(auto_now_add=True)
    # What was submitted: the version's lock counter and contract hash at that moment.
    version_lock = models.PositiveIntegerField()
    contract_sha256 = models.CharField(max_length=64)
    closed_at = models.DateTimeField(null=True, blank=True)
    closed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    outcome = models.CharField(max_length=24, choices=Outcome.choices, blank=True)
    comment = models.TextField(blank=True)

    class Meta:
        ordering = ["-submitted_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["version"],
                condition=Q(closed_at__isnull=True),
                name="review_one_active_per_version",
            ),
            models.CheckConstraint(
                condition=Q(closed_at__isnull=True, outcome="")
                | Q(closed_at__isnull=False) & ~Q(outcome=""),
                name="review_closed_with_outcome",
            ),
        ]

    def __str__(self) -> str:
        return f"review {self.pk} of {self.version}"

    @property
    def is_active(self) -> bool:
        return self.closed_at is None


class ApprovalQuerySet(models.QuerySet["Approval"]):
    def standing(self) -> ApprovalQuerySet:
        """Approvals not voided by a later edit, withdrawal or request for changes."""
        return self.filter(voided_at__isnull=True)


class Approval(models.Model):
    """A reviewer's approval of exactly one state of a version and the report they were shown.

    `version_lock` and `contract_sha256` name the version's content when it was approved;
    `report` is the impact report as shown and `report_sha256` its RFC 8785 hash. Editing the
    version voids the approval (`voided_at`); publishing accepts only approvals whose
    `version_lock` and `contract_sha256` are still the version's, whose report is the report
    now and whose `catalogue_sha256` is the hash of the catalogue entries the bundle carries.
    """

    review = models.ForeignKey(Review, on_delete=models.PROTECT, related_name="approvals")
    version = models.ForeignKey(ContractVersion, on_delete=models.PROTECT, related_name="approvals")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    version_lock = models.PositiveIntegerField()
    contract_sha256 = models.CharField(max_length=64)
    report_sha256 = models.CharField(max_length=64)
    # The source-class entries the bundle would carry, as approved (see `review.catalogue_sha256`).
    catalogue_sha256 = models.CharField(max_length=64, blank=True)
    report = models.JSONField()
    comment = models.TextField(blank=True)
    # The widenings of the report (items the version admits that the published one did not)
    # the reviewer explicitly acknowledged: [{"id", "where", "text"}], as the report had them.
    acknowledged_widenings = models.JSONField(default=list, blank=True)
    voided_at = models.DateTimeField(null=True, blank=True)
    void_reason = models.CharField(max_length=200, blank=True)
    # The approval statement the reviewer signed on their side (`compiler.statements`) and
    # its signature; empty for approvals recorded before statements, which cannot publish.
    statement = models.JSONField(null=True, blank=True)
    signature = models.CharField(max_length=100, blank=True)

    objects = ApprovalQuerySet.as_manager()

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["review", "reviewer"], name="approval_once_per_review"),
        ]

    def __str__(self) -> str:
        return f"{self.reviewer} approved {self.version}"


class ViolationJustification(models.Model):
    """An owner's reason for keeping a version although a perturbation of one scenario breaks
    its relation (a `violation`, docs/verdicts.md): without one, the violation blocks submit
    and publish. Keyed by what names the violation stably: the scenario, the perturbation's
    name and the proposition ("" for a fault of the variant as a whole)."""

    version = models.ForeignKey(
        ContractVersion, on_delete=models.CASCADE, related_name="justifications"
    )
    scenario = models.CharField(max_length=160)
    perturbation = models.CharField(max_length=300)
    proposition = models.CharField(max_length=200, blank=True)
    text = models.TextField()
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["scenario", "perturbation", "proposition"]
        constraints = [
            models.UniqueConstraint(
                fields=["version", "scenario", "perturbation", "proposition"],
                name="justification_once_per_violation",
            )
        ]

    def __str__(self) -> str:
        return f"{self.scenario} · {self.perturbation} · {self.proposition or '(variant)'}"

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.scenario, self.perturbation, self.proposition)


class StoredImpactReport(models.Model):
    """A version's impact report, computed in the background (`publishing.impact.stored`)
    and kept by the sha256 of everything it is computed from (`inputs_sha256`): the
    review page and the approve action read it instead of compiling the suite in a request.
    `document` and `report_sha256` are exactly what `publishing.impact.impact_report` gives."""

    class Status(models.TextChoices):
        PENDING = "pending", "Being computed"
        READY = "ready", "Ready"
        FAILED = "failed", "Failed"

    version = models.ForeignKey(
        ContractVersion, on_delete=models.CASCADE, related_name="impact_reports"
    )
    inputs_sha256 = models.CharField(max_length=64)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    document = models.JSONField(null=True, blank=True)
    report_sha256 = models.CharField(max_length=64, blank=True)
    error = models.TextField(blank=True)
    requested_at = models.DateTimeField(auto_now_add=True)
    computed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["version", "inputs_sha256"], name="impact_report_per_inputs"
            ),
        ]

    def __str__(self) -> str:
        return f"Impact report of {self.version} ({self.get_status_display().lower()})"


# --------------------------------------------------------------------------- signing keys


class SigningKey(models.Model):
    """One person's Ed25519 public key. Its private half lives with the person (their
    browser, or a key file) and never reaches the workbench; only `legacy` keys, generated
    by the workbench before that, kept theirs here, encrypted (`publishing.signing`), and
    nothing signs with them any more. Retired (rotated) and revoked keys are kept so the
    bundles they signed still verify; a revoked key's later statements are invalid."""

    class Origin(models.TextChoices):
        BROWSER = "browser", "Browser (WebCrypto)"
        CLI = "cli", "Key file (evidence-compiler keygen)"
        LEGACY = "legacy", "Legacy (held by the workbench)"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="signing_keys"
    )
    key_id = models.CharField(max_length=16, unique=True)
    public_key_pem = models.TextField()
    private_key_encrypted = models.TextField(blank=True, default="")
    origin = models.CharField(max_length=10, choices=Origin.choices)
    created_at = models.DateTimeField(auto_now_add=True)
    retired_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["user__username", "-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["user"],
                condition=Q(retired_at__isnull=True),
                name="signing_key_one_active_per_user",
            )
        ]

    def __str__(self) -> str:
        return f"{self.key_id} ({self.user})"

    @property
    def is_active(self) -> bool:
        return self.retired_at is None


# --------------------------------------------------------------------------- bundles

BUNDLE_IMMUTABLE = "A bundle is immutable: it is the exact bytes that were signed."


class BundleQuerySet(models.QuerySet["Bundle"]):
    def update(self, **kwargs: Any) -> int:
        raise TypeError(BUNDLE_IMMUTABLE)

    def delete(self) -> tuple[int, dict[str, int]]:
        raise TypeError(BUNDLE_IMMUTABLE)


class Bundle(models.Model):
    """The signed bundle of one published version, kept as the exact bytes that were signed
    (`compiler.bundle.serialize_bundle`), so every download is byte-identical.

    Bundles of one decision type form a chain: each names its parent (the previously
    published bundle, whose sha256 is the manifest's `parent_sha256`); the database allows
    one first bundle per type and one child per bundle, so racing publishes cannot fork it.
    """

    version = models.OneToOneField(ContractVersion, on_delete=models.PROTECT, related_name="bundle")
    decision_type = models.ForeignKey(
        DecisionType, on_delete=models.PROTECT, related_name="bundles"
    )
    parent = models.OneToOneField(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="child"
    )
    sha256 = models.CharField(max_length=64, unique=True)
    content = models.BinaryField()
    published_at = models.DateTimeField()
    publisher = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    # True when the row came from `import_bundle` rather than from publishing here.
    imported = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = BundleQuerySet.as_manager()

    class Meta:
        ordering = ["decision_type", "-published_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["decision_type"],
                condition=Q(parent__isnull=True),
                name="bundle_one_first_per_type",
            )
        ]

    def __str__(self) -> str:
        return f"bundle {self.sha256[:12]} of {self.version}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise TypeError(BUNDLE_IMMUTABLE)
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise TypeError(BUNDLE_IMMUTABLE)

    @property
    def data(self) -> bytes:
        return bytes(self.content)

    @property
    def document(self) -> dict[str, Any]:
        import json

        return json.loads(self.data)

    @property
    def filename(self) -> str:
        return f"{self.decision_type.key}-v{self.version.number}.bundle.json"
