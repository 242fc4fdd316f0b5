"""What makes a stored impact report out of date, and the recomputation it queues.

A version under review (in review or approved) has its report recomputed in the background
when a scenario, a candidate or a corpus of its decision type changes, when a source class
changes (the weak classes and the catalogue are inputs) and when another version of its type
is published (the baseline moves); a version's own report, when an owner records or
changes a justification of one of its violations. Each change queues the versions once, after its
transaction commits; the task itself hashes the inputs, so a change that alters nothing
compiles nothing. Bulk writes (`bulk_create`, `update`) send no signal: the review page
still asks for the report of the inputs it finds, so nothing stale is ever shown.

Imported from `PublishingConfig.ready` (it imports models).
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

from django.db import transaction
from django.db.models.signals import post_delete, post_save

from contracts.models import ContractVersion, SourceClass, ViolationJustification
from scenarios.models import Corpus, CorpusCandidate, Scenario

from .stored import report_refresh

UNDER_REVIEW = (ContractVersion.Status.IN_REVIEW, ContractVersion.Status.APPROVED)


class _Batch:
    """The versions queued while one transaction is open, recomputed once when it commits.

    The transaction's commit hooks hold the only strong reference to a batch: a rollback
    drops the hooks, and with them the batch, so the weak reference kept here dies with the
    transaction and its versions are never sent."""

    def __init__(self) -> None:
        self.ids: set[int] = set()
        self.sent = False

    def __call__(self) -> None:
        self.sent = True
        report_refresh(version_ids=sorted(self.ids))


_current = threading.local()


def _queue(decision_type_id: int | None, *, exclude: int | None = None) -> None:
    versions = ContractVersion.objects.filter(status__in=UNDER_REVIEW)
    if decision_type_id is not None:
        versions = versions.filter(decision_type_id=decision_type_id)
    _queue_versions(set(versions.exclude(pk=exclude).values_list("pk", flat=True)))


def _queue_versions(ids: set[int]) -> None:
    """One recomputation per version per transaction, after it commits (at once outside a
    transaction); a rolled-back transaction queues none."""
    if not ids:
        return
    reference = getattr(_current, "batch", None)
    batch = reference() if reference is not None else None
    if batch is None or batch.sent:
        batch = _Batch()
        _current.batch = weakref.ref(batch)
        batch.ids |= ids
        transaction.on_commit(batch)
    else:
        batch.ids |= ids


def _scenario_changed(sender: Any, instance: Any, **kwargs: Any) -> None:
    _queue(instance.decision_type_id)


def _candidate_changed(sender: Any, instance: Any, **kwargs: Any) -> None:
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


def connect() -> None:
    """Called once, from `PublishingConfig.ready`."""
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
