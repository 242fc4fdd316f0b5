"""The impact report, computed in the background and kept by the hash of its inputs.

At 10,000 scenarios a report is about a minute of compiles, too long for a request. So the
report is computed by a task (`tasks.compute_impact_report`) when a version is submitted and
again whenever what it is computed from changes (a scenario, a candidate, a corpus, a source
class, another version published: `signals.py`), and stored as a `StoredImpactReport` under
`inputs_sha256`, the hash of those inputs. A page or the approve action hashes the inputs
(a few queries, no compile) and reads the report stored under that hash; when there is none
yet it asks for one and says it is being computed. The stored document and its sha256 are
exactly `impact_report(version)`'s, so approvals record the same hash as before.
"""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from compiler import COMPILER_VERSION
from contracts.documents import ContractInvalid, compiled_contract
from contracts.models import ContractVersion, StoredImpactReport

from .report import FORMAT, ImpactReport, baseline_version, impact_report

logger = logging.getLogger(__name__)

# Shown, and refused with, while the report of a version's current inputs is not stored yet.
REPORT_PENDING = (
    "The impact report of version {number} is being computed; it appears here when it is "
    "ready, and the version can be approved then."
)
REPORT_FAILED = "The impact report of version {number} could not be computed: {error}"


def inputs_sha256(version: ContractVersion) -> str:
    """The hash of everything `impact_report(version)` reads: both contracts (as compiled),
    the baseline's number, the scenarios and their expectations, the corpora, the weak
    classes, the owners' justifications of its violations and the compiler version.
    `ContractInvalid` if the version is not a contract.

    An internal key, never shown or signed, so plain sorted JSON is hashed (canonical RFC
    8785 hashing of 10,000 scenarios would cost more than the queries)."""
    from scenarios.models import Corpus, CorpusCandidate, Scenario
    from scenarios.services import SCENARIO_FIELDS, weak_classes

    draft = compiled_contract(version).model_dump(mode="json")
    baseline = baseline_version(version)
    published = compiled_contract(baseline).model_dump(mode="json") if baseline else None
    scenarios = Scenario.objects.filter(decision_type_id=version.decision_type_id)
    scenario_rows = scenarios.order_by("position", "name", "id").values_list(
        "id", "corpus_id", *SCENARIO_FIELDS
    )
    corpus_ids = scenarios.values("corpus_id")
    candidates = (
        CorpusCandidate.objects.filter(corpus_id__in=corpus_ids)
        .order_by("corpus_id", "position", "id")
        .values_list("corpus_id", "data")
    )
    directories = Corpus.objects.filter(pk__in=corpus_ids).order_by("pk")
    justifications = version.justifications.order_by(
        "scenario", "perturbation", "proposition"
    ).values_list("scenario", "perturbation", "proposition", "text", "author_id")
    digest = hashlib.sha256()
    for part in (
        [FORMAT, COMPILER_VERSION, version.pk, version.number, version.sha256, draft],
        [baseline.number if baseline else None, published],
        weak_classes(),
        list(directories.values_list("pk", "directory")),
        list(justifications),
    ):
        digest.update(_json(part))
    for rows in (scenario_rows, candidates):
        for row in rows.iterator(chunk_size=2000):
            digest.update(_json(row))
        digest.update(b"|")
    return digest.hexdigest()


def _json(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, default=str, separators=(",", ":")).encode()


def stored_report(version: ContractVersion) -> StoredImpactReport:
    """The stored report of the version's current inputs, asking for it (a task) when there
    is none yet: its `status` says whether it is ready. No compile happens here."""
    inputs = inputs_sha256(version)
    stored = StoredImpactReport.objects.filter(version=version, inputs_sha256=inputs).first()
    if stored is None:
        stored = report_request(version=version, inputs=inputs)
    return stored


def ready_report(version: ContractVersion) -> ImpactReport | None:
    """The report as a reviewer sees it, if it is computed; None while it is being computed.
    `ContractInvalid` as `impact_report` raises it."""
    stored = stored_report(version)
    if stored.status != StoredImpactReport.Status.READY:
        return None
    return ImpactReport(document=stored.document, sha256=stored.report_sha256)


def report_ensure(version: ContractVersion) -> ImpactReport:
    """The report, computed here and now if it is not stored yet: for commands and the demo,
    which have no page to come back to. `ContractInvalid` as `impact_report` raises it."""
    report = ready_report(version)
    if report is None:
        report_compute(version_id=version.pk)
        report = ready_report(version)
    if report is None:  # it failed: say why, as computing it in place would have
        return impact_report(version)
    return report


def report_request(*, version: ContractVersion, inputs: str | None = None) -> StoredImpactReport:
    """Ask for the report of the version's inputs now: a pending row and the task, once (a
    second request for the same inputs finds the row). With the immediate backend (tests)
    the report is ready when this returns."""
    from .tasks import compute_impact_report

    inputs = inputs or inputs_sha256(version)
    try:
        with transaction.atomic():
            stored, created = StoredImpactReport.objects.get_or_create(
                version=version, inputs_sha256=inputs
            )
    except IntegrityError:  # requested by someone else meanwhile
        stored = StoredImpactReport.objects.get(version=version, inputs_sha256=inputs)
        created = False
    if created or stored.status == StoredImpactReport.Status.FAILED:
        compute_impact_report.enqueue(version.pk)
        stored.refresh_from_db()
    return stored


def report_refresh(*, version_ids: list[int]) -> None:
    """Queue a recomputation for these versions (their inputs changed); the task hashes the
    inputs, so a change that leaves them as they were costs no compile."""
    from .tasks import compute_impact_report

    for pk in version_ids:
        compute_impact_report.enqueue(pk)


def report_compute(*, version_id: int) -> StoredImpactReport | None:
    """The task's body: compute and store the report of the version's current inputs,
    unless it is stored already. If the inputs change while it compiles, the report is not
    stored (the change queued its own computation). The stored row, or None."""
    versions = ContractVersion.objects.select_related("decision_type")
    version = versions.filter(pk=version_id).first()
    if version is None:
        return None
    try:
        inputs = inputs_sha256(version)
    except ContractInvalid as exc:
        logger.info("Version %s is not a valid contract: %s", version_id, exc)
        return None
    stored, _ = StoredImpactReport.objects.get_or_create(version=version, inputs_sha256=inputs)
    if stored.status == StoredImpactReport.Status.READY:
        return stored
    try:
        report = impact_report(version)
    except Exception as exc:  # recorded, shown on the page; a new request retries
        stored.status = StoredImpactReport.Status.FAILED
        stored.error = f"{type(exc).__name__}: {exc}"
        stored.computed_at = timezone.now()
        stored.save(update_fields=["status", "error", "computed_at"])
        return stored
    if inputs_sha256(version) != inputs:
        return stored  # changed while compiling: the report describes nothing stored now
    stored.status, stored.error = StoredImpactReport.Status.READY, ""
    stored.document, stored.report_sha256 = report.document, report.sha256
    stored.computed_at = timezone.now()
    stored.save(update_fields=["status", "error", "document", "report_sha256", "computed_at"])
    return stored
