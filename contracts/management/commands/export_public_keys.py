from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from contracts import signing


class Command(BaseCommand):
    help = (
        "Write every known public signing key (retired ones too) to DIR as "
        "<username>-<key id>.pem, for `python -m compiler verify-bundle --public-key DIR`."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("directory")

    def handle(self, *args: Any, **options: Any) -> None:
        directory = Path(options["directory"])
        directory.mkdir(parents=True, exist_ok=True)
        keys = list(signing.all_keys())
        if not keys:
            raise CommandError("No signing keys yet: python manage.py generate_signing_key USER")
        for key in keys:
            path = directory / f"{key.user.get_username()}-{key.key_id}.pem"
            path.write_text(key.public_key_pem)
            state = "" if key.is_active else " (retired)"
            self.stdout.write(f"{path}{state}\n")
