from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from compiler_trust import BundleInvalid
from publishing import review


class Command(BaseCommand):
    help = (
        "Verify a signed bundle against this workbench's signing keys and their owners and, "
        "only if it verifies, record its version as published. Nothing is written otherwise."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file")
        parser.add_argument(
            "--tests",
            metavar="FILE",
            help="the bundle's test suite (format 3), checked against the sha256 it names",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            data = Path(options["file"]).read_bytes()
            tests = Path(options["tests"]).read_bytes() if options["tests"] else None
        except OSError as exc:
            raise CommandError(f"{exc.filename}: {exc.strerror}") from None
        try:
            imported = review.bundle_import(actor=None, data=data, tests=tests)
        except BundleInvalid as exc:
            raise CommandError(f"Refused, nothing imported: {exc.reason}") from None
        except ValidationError as exc:
            raise CommandError("Refused: " + " ".join(exc.messages)) from None
        bundle = imported.bundle
        what = "Imported" if imported.created else "Already here:"
        self.stdout.write(
            f"{what} {bundle.decision_type.key} version {bundle.version.number} "
            f"(bundle {bundle.sha256})\n"
        )
