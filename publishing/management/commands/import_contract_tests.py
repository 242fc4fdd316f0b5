from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from compiler_tools import InvalidTestFiles
from contracts.models import DecisionType
from contracts.services import EditConflict
from publishing import contract_import


class Command(BaseCommand):
    help = (
        "Show what importing the contract test directory DIR into TYPE would change against "
        "its current draft; with --confirm SHA256 (the plan's, as printed) make the draft's "
        "contract the file's and write its corpora and scenarios, as USER (--as, an owner of "
        "TYPE). Without --confirm nothing changes."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("decision_type")
        parser.add_argument("directory")
        parser.add_argument("--confirm", metavar="SHA256", help="the plan's sha256 to apply")
        parser.add_argument("--as", dest="username", help="who imports (an owner of TYPE)")

    def handle(self, *args: Any, **options: Any) -> None:
        directory = Path(options["directory"])
        try:
            decision_type = DecisionType.objects.get(key=options["decision_type"])
            plan = contract_import.import_plan(decision_type, directory)
        except DecisionType.DoesNotExist:
            raise CommandError(f"No decision type '{options['decision_type']}'.") from None
        except InvalidTestFiles as exc:
            raise CommandError(str(exc)) from None
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        for line in contract_import.plan_lines(plan):
            self.stdout.write(line + "\n")
        if not options["confirm"]:
            self.stdout.write(
                f"Nothing was changed. To import: --confirm {plan.sha256} --as USERNAME\n"
            )
            return
        if not options["username"]:
            raise CommandError("--confirm needs --as USERNAME: an owner of the decision type.")
        try:
            actor = get_user_model().objects.get(username=options["username"])
            contract_import.import_apply(
                actor=actor,
                decision_type=decision_type,
                directory=directory,
                confirmed_sha256=options["confirm"],
            )
        except get_user_model().DoesNotExist:
            raise CommandError(f"No user '{options['username']}'.") from None
        except PermissionDenied:
            raise CommandError(
                f"{options['username']} may not edit '{decision_type.key}'; nothing was imported."
            ) from None
        except EditConflict as exc:
            raise CommandError(exc.message) from None
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        self.stdout.write("Imported.\n")
