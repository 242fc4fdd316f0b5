"""Delete suite runs the retention policy does not keep (`services.runs_prune`): every run
still active, the last RUN_RETENTION_PER_VERSION runs of each version and the latest finished
run of each version that is or was published are kept. The worker runs it once a day."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from scenarios import services


class Command(BaseCommand):
    help = (
        "Delete old suite runs and their results, keeping active runs, the last "
        "RUN_RETENTION_PER_VERSION runs per version and the runs behind published versions."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--keep",
            type=int,
            default=None,
            help=f"runs to keep per version (default RUN_RETENTION_PER_VERSION, now "
            f"{settings.RUN_RETENTION_PER_VERSION})",
        )
        parser.add_argument(
            "--dry-run", action="store_true", help="say what would be deleted; delete nothing"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        keep = options["keep"]
        if keep is not None and keep < 1:
            raise CommandError(f"--keep must be at least 1, not {keep}.")
        report = services.runs_prune(keep=keep, dry_run=options["dry_run"])
        verb = "Would delete" if options["dry_run"] else "Deleted"
        self.stdout.write(
            f"{verb} {len(report.deleted)} run(s) ({report.results} results); kept {report.kept}."
        )
        if report.deleted:
            self.stdout.write("Runs: " + ", ".join(str(pk) for pk in report.deleted))
