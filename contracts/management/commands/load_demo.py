from __future__ import annotations

from django.core.management.base import BaseCommand

from contracts import demo
from scenarios import demo as scenarios_demo


class Command(BaseCommand):
    help = "Create (or bring back) the demo people, source classes and the seeds' two contracts."

    def handle(self, *args: object, **options: object) -> None:
        demo.load(self.stdout)
        scenarios_demo.load(self.stdout)
