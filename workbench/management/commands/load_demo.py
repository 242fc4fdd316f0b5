from __future__ import annotations

from argparse import ArgumentParser

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from contracts import demo
from publishing import demo as publishing_demo
from scenarios import demo as scenarios_demo

# Messages tests assert on.
REAL_USERS = (
    "This database has people who are not the demo's ({people}); loading the demo would reset "
    "the demo people ({demo}) to their published passwords. Nothing was written. Load it into "
    "an empty database, or pass --force-demo-users if you really mean to."
)


class Command(BaseCommand):
    help = (
        "Create (or bring back) the demo people, source classes, the seeds' two contracts and "
        "their scenarios, signing keys, and Atlas version 1 published with version 2 drafted. "
        "Refuses a database with anyone but the demo people unless --force-demo-users."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--force-demo-users",
            action="store_true",
            help="load even though other people exist (the demo people get the demo passwords)",
        )

    def handle(self, *args: object, **options: object) -> None:
        demo_people = [person.username for person in demo.PEOPLE]
        others = get_user_model().objects.exclude(username__in=demo_people)
        if others.exists() and not options["force_demo_users"]:
            names = sorted(others.values_list("username", flat=True)[:5])
            message = REAL_USERS.format(people=", ".join(names), demo=", ".join(demo_people))
            raise CommandError(message)
        demo.load(self.stdout)
        scenarios_demo.load(self.stdout)
        publishing_demo.load_review(self.stdout)
