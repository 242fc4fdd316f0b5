"""A finished run's JSON report, written once and read back.

`selectors.run_report_stream` takes a run's failures and flips apart from its rows. A
finished run's rows change no more, so the runner writes the report once, right after the
commit that finishes the run (`store`), in parts of about `PART_CHARACTERS` characters; the
report of a finished run is then those parts in order. A run without parts — running,
failed, finished before reports were stored, or whose storing failed — is streamed from its
rows as before. Deleting a run (`prune_runs`) deletes its parts.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from django.db import transaction

from .models import SuiteRun, SuiteRunReportPart
from .selectors.reports import report_from_rows

PART_CHARACTERS = 1_000_000


def store(run: SuiteRun) -> int:
    """Write the finished run's report (replacing any stored before) in one transaction,
    part by part, never the whole text at once; the number of parts."""
    if run.status != SuiteRun.Status.FINISHED:
        raise ValueError(f"run {run.pk} is {run.status}: only a finished run's report is kept")
    number = 0
    with transaction.atomic():
        SuiteRunReportPart.objects.filter(run=run).delete()
        for number, text in enumerate(_parts(report_from_rows(run=run)), start=1):
            SuiteRunReportPart.objects.create(run=run, number=number - 1, text=text)
    return number


def _parts(pieces: Iterable[str]) -> Iterator[str]:
    """The pieces joined into parts of at least `PART_CHARACTERS` (the last one shorter)."""
    pending: list[str] = []
    size = 0
    for piece in pieces:
        pending.append(piece)
        size += len(piece)
        if size >= PART_CHARACTERS:
            yield "".join(pending)
            pending, size = [], 0
    if pending:
        yield "".join(pending)
