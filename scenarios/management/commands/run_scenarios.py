"""`python manage.py run_scenarios DECISION_TYPE [--version N] [--json] [--user U]`.

Compiles every scenario and its perturbations in this process, prints the summary, every
expectation failure, every violation and finding (`compiler.relations`) and every flip, and
exits 1 when an expectation fails or a perturbation breaks its relation, so it can gate CI.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from contracts.models import ContractVersion
from scenarios import selectors, services
from scenarios.expectations import failure_text
from scenarios.management.commands.import_fixtures import _actor, _decision_type


class Command(BaseCommand):
    help = (
        "Run a decision type's scenarios with their perturbations against a contract version "
        "(default: the open draft, else the latest). Exit 1 if an expectation fails."
    )

    def add_base_argument(self, parser: CommandParser, *args: Any, **kwargs: Any) -> None:
        # --version here names a contract version, not Django's.
        if args != ("--version",):
            super().add_base_argument(parser, *args, **kwargs)

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("decision_type", help="The decision type's key.")
        parser.add_argument("--version", type=int, dest="number", help="The version number.")
        parser.add_argument("--json", action="store_true", help="Print the report as JSON.")
        parser.add_argument("--user", help="Who runs (default: the type's creator).")

    def handle(self, *args: Any, **options: Any) -> None:
        decision_type = _decision_type(options["decision_type"])
        actor = _actor(options["user"], decision_type)
        try:
            version = selectors.version_for(decision_type=decision_type, number=options["number"])
        except ContractVersion.DoesNotExist:
            raise CommandError(f"{decision_type.key} has no version {options['number']}.") from None
        try:
            run = services.run_start(actor=actor, version=version, background=False)
        except (ValidationError, PermissionDenied) as exc:
            raise CommandError(" ".join(getattr(exc, "messages", [str(exc)]))) from None
        report = selectors.run_report(run=run)
        report["verdicts"] = _verdicts(run)
        report["violations"] = sum(v["kind"] == "violation" for v in report["verdicts"])
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2))
        else:
            self._print(report)
        if run.status != "finished":
            raise CommandError(f"The run failed: {run.error}")
        if report["failures"] or report["violations"]:
            raise SystemExit(1)

    def _print(self, report: dict[str, Any]) -> None:
        summary = report["summary"]
        write = self.stdout.write
        write(
            f"{report['decision_type']} v{report['version']} (run {report['run']}): "
            f"{summary.get('scenarios', 0)} scenarios, {summary.get('perturbations', 0)} "
            f"perturbations, {summary.get('compiles', 0)} compiles in "
            f"{summary.get('seconds', 0)} s"
        )
        write(
            f"{summary.get('failures', 0)} expectation failure(s) in "
            f"{summary.get('failing_scenarios', 0)} scenario(s); "
            f"{summary.get('flipped_slots', 0)} flipped slot(s) in "
            f"{summary.get('variants_with_flips', 0)} variant(s)"
        )
        if report["failures"]:
            write("\nExpectation failures:")
            for f in report["failures"]:
                write(f"  FAIL {f['scenario']}: {failure_text(f)}")
        if report["verdicts"]:
            write("\nVerdicts:")
            for v in report["verdicts"]:
                where = f"{v['scenario']} · {v['perturbation']}"
                write(f"  {v['kind'].upper()} {where}: {v['message']}")
        if report["flips"]:
            write("\nFlips:")
            for f in report["flips"]:
                write(
                    f"  {f['scenario']} · {f['perturbation']}: {f['proposition']} "
                    f"{f['base']} -> {f['variant']}"
                    + (f" ({f['variant_reason']})" if f.get("variant_reason") else "")
                )


def _verdicts(run: Any) -> list[dict[str, Any]]:
    """Every violation and finding of the run (violations first), with its scenario: the
    verdicts are stored with each variant (`ScenarioResult.judged`)."""
    variants = run.results.exclude(perturbation="").order_by("position")
    found = [
        {"scenario": result.scenario_name, **verdict}
        for result in variants.only("scenario_name", "flips", "verdicts")
        for verdict in result.judged
        if verdict["kind"] != "expected"
    ]
    return sorted(found, key=lambda v: v["kind"] != "violation")
