from __future__ import annotations

from django.apps import AppConfig
from django.db.models.signals import post_migrate


class ContractsConfig(AppConfig):
    name = "contracts"
    verbose_name = "Evidence contracts"

    def ready(self) -> None:
        from .roles import ensure_site_groups

        # Runs after django.contrib.auth has created the permissions the groups need, and
        # again after every test-database flush, so the groups always exist.
        post_migrate.connect(ensure_site_groups, sender=self, dispatch_uid="contracts-groups")
