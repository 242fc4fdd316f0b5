"""The audit actions of this app (`AuditEvent.action` is a plain string): the services and
the runner write them through `contracts.services.audit_record`."""

from __future__ import annotations


class Action:
    CORPUS_IMPORTED = "corpus.imported"
    CANDIDATE_SAVED = "corpus.candidate_saved"
    SCENARIO_CREATED = "scenario.created"
    SCENARIO_UPDATED = "scenario.updated"
    EXPECTATIONS_TAKEN = "scenario.expectations_taken"
    SCENARIO_ARCHIVED = "scenario.archived"
    SCENARIO_RESTORED = "scenario.restored"
    CORPUS_ARCHIVED = "corpus.archived"
    CORPUS_RESTORED = "corpus.restored"
    CANDIDATE_ARCHIVED = "corpus.candidate_archived"
    CANDIDATE_RESTORED = "corpus.candidate_restored"
    RUN_STARTED = "run.started"
    RUN_REQUEUED = "run.requeued"
    RUN_FINISHED = "run.finished"
    RUN_FAILED = "run.failed"
    RUN_PRUNED = "run.pruned"
    STRENGTH_STARTED = "strength.started"
    STRENGTH_FINISHED = "strength.finished"
    STRENGTH_FAILED = "strength.failed"
