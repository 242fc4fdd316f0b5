"""ASGI entry point: the production profile unless DJANGO_SETTINGS_MODULE names another.

Never the development settings by default: they carry DEBUG and the checkout's built-in
secret. Without its environment the production profile refuses to start and names every
missing variable (docs/deployment.md)."""

from __future__ import annotations

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "workbench.settings.production")

application = get_asgi_application()
