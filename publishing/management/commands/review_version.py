from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from contracts import services
from contracts.documents import ContractInvalid
from contracts.models import ContractVersion
from publishing import review
from publishing.demo import KeyFiles

ACTIONS = ("submit", "approve", "request-changes", "publish", "retire", "withdraw", "report")


class Command(BaseCommand):
    help = (
        "Move a contract version through review from the command line, as USER, with the same "
        "actions the browser uses. `approve` prints the impact report and approves exactly it; "
        "`report` only prints it, with the id of each widening; `approve` of a version that "
        "widens the published one needs each acknowledged (`--acknowledge ID`, repeatable, or "
        "`--acknowledge-all`), as the browser's checkboxes do."
    )

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        # `--version N` names the contract version (Django's own `--version` gives way).
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--key-dir", help="the directory holding USERNAME.key (keygen)")
        parser.add_argument("decision_type")
        parser.add_argument("action", choices=ACTIONS)
        parser.add_argument("--version", type=int, dest="number", required=True)
        parser.add_argument("--user", required=True, help="Who acts (their permissions apply).")
        parser.add_argument("--comment", default="", help="For approve, request-changes, retire.")
        parser.add_argument(
            "--acknowledge",
            action="append",
            default=[],
            metavar="WIDENING_ID",
            help="For approve: acknowledge this widening (an id `report` prints); repeatable.",
        )
        parser.add_argument(
            "--acknowledge-all",
            action="store_true",
            help="For approve: acknowledge every widening the report lists (each is printed).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        actor = get_user_model().objects.filter(username=options["user"]).first()
        if actor is None:
            raise CommandError(f"There is nobody called '{options['user']}'.")
        version = (
            ContractVersion.objects.select_related("decision_type")
            .filter(decision_type__key=options["decision_type"], number=options["number"])
            .first()
        )
        if version is None:
            raise CommandError(f"'{options['decision_type']}' has no version {options['number']}.")
        action, comment = options["action"], options["comment"]
        if action != "approve" and (options["acknowledge"] or options["acknowledge_all"]):
            raise CommandError("--acknowledge and --acknowledge-all are for approve only.")
        try:
            if action in ("report", "approve"):
                report = review.report_ensure(version)
                for line in report.headline:
                    self.stdout.write(line + "\n")
                for change in report.contract_changes:
                    self.stdout.write(f"  - {change['text']}\n")
                for widening in report.widenings:
                    self.stdout.write(f"  widening {widening['id']}: {widening['text']}\n")
                self.stdout.write(f"report sha256 {report.sha256}\n")
                if action == "approve":
                    acknowledged = _acknowledged(report.widening_ids, options)
                    for widening_id in acknowledged:
                        self.stdout.write(f"acknowledging widening {widening_id}\n")
                    _key_files(options).approve(
                        actor=actor,
                        version=version,
                        report_sha256=report.sha256,
                        comment=comment,
                        acknowledged_widenings=acknowledged,
                    )
            elif action == "submit":
                review.version_submit(
                    actor=actor, version=version, expected_lock_version=version.lock_version
                )
            elif action == "request-changes":
                review.version_request_changes(actor=actor, version=version, comment=comment)
            elif action == "publish":
                bundle = _key_files(options).publish(actor=actor, version=version)
                self.stdout.write(f"bundle sha256 {bundle.sha256}\n")
            elif action == "retire":
                review.version_retire(actor=actor, version=version, reason=comment)
            elif action == "withdraw":
                review.version_withdraw(actor=actor, version=version)
        except (ValidationError, services.EditConflict, ContractInvalid) as exc:
            messages = getattr(exc, "messages", None) or [str(exc)]
            raise CommandError(" ".join(messages)) from None
        except PermissionDenied as exc:
            raise CommandError(f"{actor.get_username()}: {exc}") from None
        version.refresh_from_db()
        self.stdout.write(
            f"{version.decision_type.key} version {version.number} is "
            f"{version.get_status_display().lower()}\n"
        )


def _acknowledged(widening_ids: list[str], options: Any) -> list[str]:
    """The widenings this approval acknowledges, in the report's order: all of them with
    --acknowledge-all, else those named. An id the report does not list, or a widening left
    unacknowledged, is refused here, by id, before anything is signed."""
    named = list(dict.fromkeys(options["acknowledge"]))
    if options["acknowledge_all"]:
        if named:
            raise CommandError("Pass --acknowledge-all or --acknowledge, not both.")
        return list(widening_ids)
    unknown = [w for w in named if w not in widening_ids]
    if unknown:
        listed = ", ".join(widening_ids) or "none"
        raise CommandError(
            f"The report lists no widening {', '.join(unknown)}; it lists: {listed}."
        )
    missing = [w for w in widening_ids if w not in named]
    if missing:
        raise CommandError(
            f"This version widens the published one; acknowledge each widening to approve "
            f"(--acknowledge ID, once per widening, or --acknowledge-all). "
            f"Not acknowledged: {', '.join(missing)}."
        )
    return [w for w in widening_ids if w in named]


def _key_files(options: Any) -> Any:
    """Approving and publishing are signed with the person's own key file (keygen's
    `--out` directory, holding USERNAME.key): the workbench holds no private key."""
    if not options.get("key_dir"):
        raise CommandError("approve and publish sign with your key file: pass --key-dir DIR")
    return KeyFiles(options["key_dir"])
