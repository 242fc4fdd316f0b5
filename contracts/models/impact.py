"""Stored impact reports: the report of a version's inputs (`StoredImpactReport`), its head
(`ImpactReportHead`, every section but the scenarios), one row per scenario of it
(`ImpactScenarioEntry`) and the slices workers compute it in (`ImpactReportChunk`). The
`publishing.impact` package computes and reads them; pages read the head and a page of
entries, never the whole report."""

from __future__ import annotations

from django.db import models

from .versions import ContractVersion


class StoredImpactReport(models.Model):
    """A version's impact report, computed in the background (`publishing.impact.stored`)
    and kept by the sha256 of everything it is computed from (`inputs_sha256`): the
    review page and the approve action read it instead of compiling the suite in a request.
    Its head (`ImpactReportHead`) and the entries in order (`scenarios`) make up exactly the
    document `publishing.impact.impact_report` gives, and `report_sha256` is its hash."""

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting for a worker"
        COMPUTING = "computing", "Being computed"
        READY = "ready", "Ready"
        FAILED = "failed", "Failed"

    version = models.ForeignKey(
        ContractVersion, on_delete=models.CASCADE, related_name="impact_reports"
    )
    inputs_sha256 = models.CharField(max_length=64)
    # What the pages find a ready report by (`publishing.impact.inputs_fingerprint`): a hash
    # of a few aggregates that move whenever an input does, cheap at any suite size; written
    # once a page has found the report by `inputs_sha256` under those aggregates.
    inputs_fingerprint = models.CharField(max_length=64, blank=True, default="")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    # The head as pages read it, its size bounded whatever the suite
    # (`publishing.impact.shown.page_head`): a page decodes this, not the head.
    shown = models.JSONField(null=True, blank=True)
    report_sha256 = models.CharField(max_length=64, blank=True)
    error = models.TextField(blank=True)  # why the last attempt failed, if one did
    requested_at = models.DateTimeField(auto_now_add=True)
    computed_at = models.DateTimeField(null=True, blank=True)
    # The computing worker's sign of life, as a suite run's: written as it starts and then
    # every IMPACT_REPORT_HEARTBEAT_SECONDS; a report computing with an older heartbeat than
    # IMPACT_REPORT_STALE_SECONDS and no slice left to do lost its worker and is queued
    # again (or failed).
    started_at = models.DateTimeField(null=True, blank=True)  # of the current attempt
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)  # times a worker started it
    requeued_at = models.DateTimeField(null=True, blank=True)  # last queued again after a stop
    # Progress while computing, shown on the page: scenarios in the report, and done so far.
    scenarios_total = models.PositiveIntegerField(default=0)
    scenarios_done = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["version", "inputs_sha256"], name="impact_report_per_inputs"
            ),
        ]

    def __str__(self) -> str:
        return f"Impact report of {self.version} ({self.get_status_display().lower()})"


class ImpactReportHead(models.Model):
    """A ready report's head: the report without its "scenarios" (verdicts, widenings, per
    proposition, summary…); each scenario's part is an ImpactScenarioEntry.

    A row of its own: it runs to megabytes at 10,000 scenarios, and SQLite reads a row's
    columns in order, walking a large value's overflow pages to reach any column after it,
    so in the report's row it made every page that finds a report pay for reading it."""

    report = models.OneToOneField(
        StoredImpactReport, on_delete=models.CASCADE, primary_key=True, related_name="stored_head"
    )
    head = models.JSONField()


class ImpactScenarioEntry(models.Model):
    """One scenario's part of a stored report (`entry`, as the report's "scenarios" list
    holds it), at its `position` in that list, with the counts the pages filter and page by
    kept in columns so that no page decodes the entries it does not show."""

    report = models.ForeignKey(StoredImpactReport, on_delete=models.CASCADE, related_name="entries")
    position = models.PositiveIntegerField()
    name = models.TextField()
    changed = models.BooleanField()
    flips = models.PositiveIntegerField()
    admitted_changes = models.PositiveIntegerField()
    newly_failing = models.PositiveIntegerField()
    now_passing = models.PositiveIntegerField()
    problems = models.PositiveIntegerField()
    # The propositions its slot changes and newly failing expectations are about, each
    # between bars ("|a|b|"), so that a filter by proposition is one `contains`.
    propositions = models.TextField(blank=True)
    entry = models.JSONField()
    # What a page's list of scenarios reads instead (`publishing.impact.entries.listed`): the
    # entry without its verdicts and each compile's sentence, a third of its size or less.
    # A page reads a row whose `listed` is null whole.
    listed = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["report", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["report", "position"], name="impact_entry_position_unique"
            ),
        ]


class ImpactReportChunk(models.Model):
    """A slice of a report's scenarios (`first` is the position of its first one in the
    report), one task each, so that every worker takes a share
    (`publishing.impact.chunks.chunk_execute`); its worker beats on it while it compiles."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"

    report = models.ForeignKey(StoredImpactReport, on_delete=models.CASCADE, related_name="chunks")
    number = models.PositiveIntegerField()
    first = models.PositiveIntegerField()
    scenario_ids = models.JSONField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    # How many times a worker claimed it: only the latest claim's worker stores its entries.
    claims = models.PositiveIntegerField(default=0)
    claimed_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["report", "number"]
        constraints = [
            models.UniqueConstraint(fields=["report", "number"], name="impact_chunk_number_unique")
        ]
