from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from publishing import signing


class Command(BaseCommand):
    help = (
        "Create an Ed25519 signing key pair for a person (the private key is stored encrypted). "
        "With --rotate, their current key is retired and kept so old bundles still verify."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument(
            "--rotate", action="store_true", help="Replace the person's current key."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        user = get_user_model().objects.filter(username=options["username"]).first()
        if user is None:
            raise CommandError(f"There is nobody called '{options['username']}'.")
        try:
            key = signing.signing_key_generate(actor=None, user=user, rotate=options["rotate"])
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        self.stdout.write(f"{user.get_username()}: signing key {key.key_id}\n")
        self.stdout.write(key.public_key_pem)
