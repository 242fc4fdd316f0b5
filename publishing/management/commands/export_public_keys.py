from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from compiler_trust import KEY_SET_FILE, key_set_json
from publishing import signing


class Command(BaseCommand):
    help = (
        "Write every known public signing key (retired ones too) to DIR: the key set "
        f"DIR/{KEY_SET_FILE} (each key's owner, whether it may publish and/or approve and "
        "for which decision types, from their roles now), which "
        "`python -m compiler_tools verify-bundle --public-key DIR` reads, and each key as "
        "<username>-<key id>.pem for people and other tools."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("directory")

    def handle(self, *args: Any, **options: Any) -> None:
        directory = Path(options["directory"])
        directory.mkdir(parents=True, exist_ok=True)
        keys = list(signing.all_keys())
        if not keys:
            raise CommandError(
                "No signing keys yet: register one (Signing keys page, or "
                "python manage.py register_signing_key USER NAME.pub.pem)"
            )
        entries = signing.key_set_entries()
        for key, entry in zip(keys, entries, strict=True):
            path = directory / f"{key.user.get_username()}-{key.key_id}.pem"
            path.write_text(key.public_key_pem)
            state = "" if key.is_active else " (retired)"
            roles = ", ".join(_scoped(entry, role) for role in entry["roles"]) or "none"
            self.stdout.write(f"{path}{state} — {entry['person']}, roles: {roles}\n")
        key_set = directory / KEY_SET_FILE
        key_set.write_bytes(key_set_json(entries))
        self.stdout.write(
            f"{key_set}: {len(entries)} key(s) with their owners, roles and decision types\n"
        )


def _scoped(entry: dict[str, Any], role: str) -> str:
    """`publish (credit.review, refund.desk)`: a role with the types it is scoped to."""
    return f"{role} ({', '.join(entry[f'{role}_types']) or 'no type yet'})"
