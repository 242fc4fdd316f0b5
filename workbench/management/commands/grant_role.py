"""`python manage.py grant_role USERNAME DECISION_TYPE ROLE [--actor USERNAME]`.

Makes a person owner, reviewer or viewer of one decision type — the same action (and audit
event) as the decision type's People page — for provisioning scripts. The grant is recorded
as made by `--actor` (an owner of the type or a superuser); without it, by the first
superuser, as a deployment's provisioning account usually is.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from contracts import roles, services
from contracts.models import DecisionType

NO_SUCH_USER = "No user named {username!r}."
NO_SUCH_TYPE = "No decision type with key {key!r}."
NO_SUPERUSER = (
    "No superuser to record as the one granting; pass --actor USERNAME (an owner of the "
    "decision type) or create one with `manage.py createsuperuser`."
)
ACTOR_NOT_ALLOWED = "{actor!r} may not grant roles on {key!r}: only its owners and superusers may."


class Command(BaseCommand):
    help = "Give a user a role (owner, reviewer, viewer) on one decision type."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("decision_type", help="the decision type's key")
        parser.add_argument("role", choices=[str(role) for role in roles.Role])
        parser.add_argument("--actor", help="who grants it (default: the first superuser)")

    def handle(self, *args: Any, **options: Any) -> None:
        users = get_user_model()._default_manager
        user = users.filter(username=options["username"]).first()
        if user is None:
            raise CommandError(NO_SUCH_USER.format(username=options["username"]))
        decision_type = DecisionType.objects.filter(key=options["decision_type"]).first()
        if decision_type is None:
            raise CommandError(NO_SUCH_TYPE.format(key=options["decision_type"]))
        if options["actor"]:
            actor = users.filter(username=options["actor"]).first()
            if actor is None:
                raise CommandError(NO_SUCH_USER.format(username=options["actor"]))
        else:
            actor = users.filter(is_superuser=True, is_active=True).order_by("pk").first()
            if actor is None:
                raise CommandError(NO_SUPERUSER)
        try:
            services.access_grant(
                actor=actor, decision_type=decision_type, user=user, role=options["role"]
            )
        except PermissionDenied:
            raise CommandError(
                ACTOR_NOT_ALLOWED.format(actor=actor.get_username(), key=decision_type.key)
            ) from None
        except ValidationError as error:
            raise CommandError(" ".join(error.messages)) from None
        self.stdout.write(f"{user.get_username()} is now {options['role']} of {decision_type.key}")
