"""`python manage.py import_fixtures DECISION_TYPE FILE --name NAME [--replace] [--user U]`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from contracts.models import DecisionType
from scenarios import services
from scenarios.compiling import CorpusInvalid, CorpusProblem


class Command(BaseCommand):
    help = (
        "Import a fixture corpus (the compiler's {directory, candidates} JSON) into a decision "
        "type. Every invalid item is listed with its index, id, field and message; nothing is "
        "saved if any item is invalid (exit 1)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("decision_type", help="The decision type's key.")
        parser.add_argument("file", help="A JSON file, or - for stdin.")
        parser.add_argument("--name", help="The corpus's name (default: the file's stem).")
        parser.add_argument("--replace", action="store_true", help="Replace a corpus's content.")
        parser.add_argument(
            "--strict",
            action="store_true",
            help="Refuse classes and propositions the catalogue and contract do not know "
            "(without it they are printed as warnings and the corpus is imported).",
        )
        parser.add_argument(
            "--user", help="Who imports (an owner of the type; default: its creator)."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        decision_type = _decision_type(options["decision_type"])
        actor = _actor(options["user"], decision_type)
        path = options["file"]
        try:
            document = services.corpus_read(_read_bytes(path))
        except OSError as exc:
            raise CommandError(f"Cannot read {path}: {exc.strerror or exc}") from None
        except CorpusInvalid as exc:
            self._report(exc.problems)
            raise CommandError(f"{path} cannot be read as JSON; nothing was saved.") from None
        name = options["name"] or ("stdin" if path == "-" else Path(path).stem)
        try:
            corpus = services.corpus_import(
                actor=actor,
                decision_type=decision_type,
                name=name,
                document=document,
                replace=options["replace"],
                strict=options["strict"],
            )
        except CorpusInvalid as exc:
            self._report(exc.problems)
            raise CommandError(
                f"{len(exc.problems)} problem(s) in {path}; nothing was saved."
            ) from None
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        self._report(corpus.warnings, prefix="warning: ")
        self.stdout.write(
            f"Imported {corpus.candidates.count()} candidates into corpus '{corpus.name}' "
            f"of {decision_type.key}."
        )

    def _report(self, problems: list[CorpusProblem], prefix: str = "") -> None:
        for problem in problems:
            index = "-" if problem.index is None else problem.index
            named = "" if problem.candidate_id is None else f" (id {problem.candidate_id!r})"
            self.stderr.write(f"{prefix}item {index}{named}, field {problem.field}: {problem.msg}")


def _read_bytes(path: str) -> bytes:
    return sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()


def _decision_type(key: str) -> DecisionType:
    try:
        return DecisionType.objects.get(key=key)
    except DecisionType.DoesNotExist:
        raise CommandError(f"No decision type '{key}'.") from None


def _actor(username: str | None, decision_type: DecisionType) -> Any:
    if username is None:
        return decision_type.created_by
    try:
        return get_user_model().objects.get(username=username)
    except get_user_model().DoesNotExist:
        raise CommandError(f"No user '{username}'.") from None
