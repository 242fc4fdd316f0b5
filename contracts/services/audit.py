"""The audit log's one writer: every service records what it changed, in its transaction."""

from __future__ import annotations

from typing import Any

from contracts.models import AuditEvent, ContractVersion, DecisionType

from .checks import Actor


def audit_record(
    *,
    actor: Actor | None,
    # An AuditAction, or an action of an app above this one (scenarios' and publishing's own
    # enums and names): the column holds any of them.
    action: str,
    summary: str,
    decision_type: DecisionType | None = None,
    version: ContractVersion | None = None,
    changes: dict[str, Any] | None = None,
) -> AuditEvent:
    return AuditEvent.objects.create(
        actor=actor if actor is not None and actor.is_authenticated else None,
        action=action,
        summary=summary[:300],
        decision_type=decision_type
        if decision_type is not None
        else getattr(version, "decision_type", None),
        version=version,
        changes=changes or {},
    )
