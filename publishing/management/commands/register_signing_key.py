from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from contracts.models import SigningKey
from publishing import signing


class Command(BaseCommand):
    help = (
        "Register a person's Ed25519 public key, made on their own machine with "
        "`evidence-compiler keygen NAME --out DIR` (the private key never comes here). A "
        "current key is rotated out: retired, and kept so what it signed still verifies. "
        "With --revoke KEY_ID, revoke that key instead."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("public_key", nargs="?", help="the NAME.pub.pem file keygen wrote")
        parser.add_argument("--revoke", metavar="KEY_ID", help="revoke this key of theirs")

    def handle(self, *args: Any, **options: Any) -> None:
        user = get_user_model().objects.filter(username=options["username"]).first()
        if user is None:
            raise CommandError(f"There is nobody called '{options['username']}'.")
        try:
            if options["revoke"]:
                key = SigningKey.objects.filter(user=user, key_id=options["revoke"]).first()
                if key is None:
                    raise CommandError(f"{user.get_username()} has no key {options['revoke']}.")
                signing.signing_key_revoke(actor=None, signing_key=key)
                self.stdout.write(f"{user.get_username()}: revoked signing key {key.key_id}\n")
                return
            if not options["public_key"]:
                raise CommandError("Give the public key file (or --revoke KEY_ID).")
            public = Path(options["public_key"]).read_bytes()
            key = signing.signing_key_register(
                actor=None, user=user, public_key=public, origin=SigningKey.Origin.CLI
            )
        except OSError as exc:
            raise CommandError(f"{options['public_key']}: {exc.strerror}") from None
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        except PermissionDenied as exc:  # a viewer: nobody who signs anything
            raise CommandError(str(exc)) from None
        self.stdout.write(f"{user.get_username()}: signing key {key.key_id}\n")
