from __future__ import annotations

from django.apps import AppConfig

from workers import registry


class PublishingConfig(AppConfig):
    """Review actions, the impact report, signing keys and bundles. Its models (reviews,
    approvals, signing keys, bundles) still live in `contracts` (no table moves); this app
    holds the code that acts on them, above `scenarios` because the impact report compiles
    the fixture scenarios."""

    name = "publishing"
    verbose_name = "Review and publishing"

    def ready(self) -> None:
        # Imported here: they import models, which need the app registry.
        from . import (
            checks,  # noqa: F401  (registers the system checks)
            replay,
        )
        from .impact import signals, stored

        signals.connect()  # stored impact reports follow their inputs
        registry.register_stale_work_checker("impact reports", stored.reports_recover_stale)
        registry.register_stale_work_checker("receipt replays", replay.chunks_recover_stale)
