from __future__ import annotations

from django.apps import AppConfig

from workers import registry


class ScenariosConfig(AppConfig):
    name = "scenarios"
    verbose_name = "Fixtures, scenarios and runs"

    def ready(self) -> None:
        # Imported here: it imports this app's models, which need the app registry.
        from . import recovery

        registry.register_stale_work_checker("suite runs", recovery.recover_runs)
        registry.register_stale_work_checker("suite strength runs", recovery.recover_strength_runs)
        registry.register_housekeeping(
            "prune-runs", recovery.prune_runs, every_seconds=recovery.prune_every_seconds
        )
