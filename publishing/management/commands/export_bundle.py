from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from contracts.models import ContractVersion
from publishing import review


class Command(BaseCommand):
    help = (
        "Write the signed bundle of a published (or superseded, or retired) version, byte for "
        "byte as it was signed. Without --version: the published version."
    )

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        # `--version N` names the contract version; Django's own `--version` (its release)
        # gives way to it.
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("decision_type", help="The decision type's key.")
        parser.add_argument("--version", type=int, dest="number", help="The version number.")
        parser.add_argument("-o", "--output", default="-", help="A file, or - for stdout.")
        parser.add_argument(
            "--tests",
            metavar="FILE",
            help="Also write the bundle's test suite (format 3: its scenarios) to this file.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        versions = ContractVersion.objects.filter(decision_type__key=options["decision_type"])
        if options["number"] is not None:
            version = versions.filter(number=options["number"]).first()
        else:
            version = versions.filter(status=ContractVersion.Status.PUBLISHED).first()
        if version is None:
            raise CommandError(
                f"'{options['decision_type']}' has no "
                + (f"version {options['number']}." if options["number"] else "published version.")
            )
        try:
            data = review.bundle_bytes(version)
            suite = review.suite_bytes(version) if options["tests"] else None
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        if options["output"] == "-":
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        else:
            Path(options["output"]).write_bytes(data)
            self.stderr.write(f"Wrote {options['output']} ({len(data)} bytes)\n")
        if suite is not None:
            Path(options["tests"]).write_bytes(suite)
            self.stderr.write(f"Wrote {options['tests']} ({len(suite)} bytes)\n")
