"""The append-only audit log: every change, who made it, before and after."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models

from .versions import ContractVersion, DecisionType


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
    IMPACT_REPORT_RETRIED = "impact_report.retried", "Impact report asked for again"
    SIGNING_KEY_REGISTERED = "signing_key.registered", "Signing key registered"
    SIGNING_KEY_REVOKED = "signing_key.revoked", "Signing key revoked"
    # Changes a sign-in through the identity provider makes to the person's own roles.
    SIGN_IN_GROUP_ADDED = "sign_in.site_group_added", "Site group given at sign-in"
    SIGN_IN_GROUP_REMOVED = "sign_in.site_group_removed", "Site group taken away at sign-in"
    SIGN_IN_ROLE_SET = "sign_in.role_set", "Role set at sign-in"
    SIGN_IN_ROLE_REMOVED = "sign_in.role_removed", "Role taken away at sign-in"


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
