from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from contracts.models import DecisionType
from publishing import contract_files


class Command(BaseCommand):
    help = (
        "Write TYPE's current version (or --version N), its corpora and scenarios to DIR as a "
        "contract test "
        "directory (contract.yaml, corpora/*.yaml, scenarios/*.yaml) that "
        "`evidence-compiler test DIR` runs."
    )

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        # `--version` is the contract's version here, not Django's own version flag.
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("decision_type")
        parser.add_argument("directory")
        parser.add_argument(
            "--version",
            type=int,
            dest="number",
            default=None,
            help="the version number to export (default: the current version)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            decision_type = DecisionType.objects.get(key=options["decision_type"])
            version = contract_files.export_version(decision_type, options["number"])
            files = contract_files.export_files(decision_type, version)
        except DecisionType.DoesNotExist:
            raise CommandError(f"No decision type '{options['decision_type']}'.") from None
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        for path in contract_files.write_directory(files, Path(options["directory"])):
            self.stdout.write(f"{path}\n")
