from __future__ import annotations

from django.core.management.base import BaseCommand

from contracts import demo
from scenarios import demo as scenarios_demo


class Command(BaseCommand):
    help = (
        "Create (or bring back) the demo people, source classes, the seeds' two contracts and "
        "their scenarios, signing keys, and Atlas version 1 published with version 2 drafted."
    )

    def handle(self, *args: object, **options: object) -> None:
        demo.load(self.stdout)
        scenarios_demo.load(self.stdout)
        demo.load_review(self.stdout)
