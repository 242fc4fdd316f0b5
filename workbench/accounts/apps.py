from __future__ import annotations

from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "workbench.accounts"
    label = "accounts"
    verbose_name = "Sign-in"
