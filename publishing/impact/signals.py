"""What makes a stored impact report out of date, and the recomputation it queues.

A version under review (in review or approved) has its report recomputed in the background
when a scenario, a candidate or a corpus of its decision type changes, when a source class
changes (the weak classes and the catalogue are inputs) and when another version of its type
is published (the baseline moves); a version's own report, when an owner records or
changes a justification of one of its violations. Each change queues the versions once, after its
transaction commits; the task itself hashes the inputs, so a change that alters nothing
compiles nothing. Bulk writes (`bulk_create`, `update`) send no signal: the review page
still asks for the report of the inputs it finds, so nothing stale is ever shown.

And as a worker starts (`scenarios.heartbeat.worker_starting`) and then every
STALE_WORK_CHECK_SECONDS (`scenarios.heartbeat.stale_work_check`), the reports a stopped worker
left computing are queued again or failed (`stored.reports_requeue_stale`).
"""

from __future__ import annotations

import threading
from typing import Any

from django.db import transaction
from django.db.models.signals import post_delete, post_save

from contracts.models import ContractVersion, SourceClass, ViolationJustification

_pending = threading.local()

UNDER_REVIEW = (ContractVersion.Status.IN_REVIEW, ContractVersion.Status.APPROVED)


def _queue(decision_type_id: int | None, *, exclude: int | None = None) -> None:
    versions = ContractVersion.objects.filter(status__in=UNDER_REVIEW)
    if decision_type_id is not None:
        versions = versions.filter(decision_type_id=decision_type_id)
    if exclude is not None:
        versions = versions.exclude(pk=exclude)
    _queue_versions(set(versions.values_list("pk", flat=True)))


def _queue_versions(ids: set[int]) -> None:
    if not ids:
        return
    # One recomputation per version per transaction: the callback, once registered, takes
    # every id queued until the commit (a rolled-back transaction drops it, and its ids).
    registered = any(entry[1] is _flush for entry in transaction.get_connection().run_on_commit)
    if not registered:
        _pending.ids = set()
    _pending.ids |= ids
    if not registered:
        transaction.on_commit(_flush)


def _flush() -> None:
    from .stored import report_refresh

    ids: set[int] = getattr(_pending, "ids", set())
    _pending.ids = set()
    report_refresh(version_ids=sorted(ids))


def _scenario_changed(sender: Any, instance: Any, **kwargs: Any) -> None:
    _queue(instance.decision_type_id)


def _candidate_changed(sender: Any, instance: Any, **kwargs: Any) -> None:
    from scenarios.models import Corpus

    corpus = Corpus.objects.filter(pk=instance.corpus_id)
    decision_type_id = corpus.values_list("decision_type_id", flat=True).first()
    if decision_type_id is not None:
        _queue(decision_type_id)


def _source_class_changed(sender: Any, instance: Any, **kwargs: Any) -> None:
    _queue(None)


def _justification_changed(sender: Any, instance: Any, **kwargs: Any) -> None:
    # An owner's justification is part of the report it is recorded on (verdicts section).
    _queue_versions({instance.version_id})


def _version_changed(sender: Any, instance: ContractVersion, **kwargs: Any) -> None:
    if instance.status == ContractVersion.Status.PUBLISHED:
        _queue(instance.decision_type_id, exclude=instance.pk)


def _recover_stale_reports(sender: Any, stdout: Any = None, **kwargs: Any) -> None:
    """A worker starts: reports a stopped worker left computing are queued again (or
    failed), as its suite runs are."""
    from .stored import report_state, reports_requeue_stale

    for stored in reports_requeue_stale():
        if stdout is not None:
            stdout.write(
                f"Impact report of version {stored.version_id}: {stored.status}. "
                f"{report_state(stored)}"
            )


def connect() -> None:
    """Called once, from `PublishingConfig.ready`."""
    from scenarios.heartbeat import stale_work_check, worker_starting
    from scenarios.models import Corpus, CorpusCandidate, Scenario

    worker_starting.connect(_recover_stale_reports, dispatch_uid="impact-worker-starting")
    stale_work_check.connect(_recover_stale_reports, dispatch_uid="impact-stale-work-check")

    receivers = [
        (_scenario_changed, Scenario),
        (_scenario_changed, Corpus),
        (_candidate_changed, CorpusCandidate),
        (_source_class_changed, SourceClass),
        (_justification_changed, ViolationJustification),
    ]
    for name, signal in (("save", post_save), ("delete", post_delete)):
        for receiver, model in receivers:
            signal.connect(receiver, sender=model, dispatch_uid=f"impact-{model.__name__}-{name}")
    post_save.connect(_version_changed, sender=ContractVersion, dispatch_uid="impact-published")
