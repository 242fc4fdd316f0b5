"""System checks: a deployment must not run on the checkout's built-in secret.

The private signing keys are encrypted under a key derived from `SIGNING_KEY_SECRET` (or
`SECRET_KEY`); with the secret every checkout shares, a copy of the database would reveal them
all. Django's own `check --deploy` only warns, and only when asked, so this is an error
whenever DEBUG is off.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import Error, register

LOCAL_ONLY_SECRET = (
    "DEBUG is off but the secret that encrypts the private signing keys is the checkout's "
    "built-in one; set DJANGO_SECRET_KEY (or SIGNING_KEY_SECRET) to a secret of your own."
)


@register()
def signing_secret_is_not_the_local_default(**kwargs: Any) -> list[Error]:
    if settings.DEBUG:
        return []
    secret = getattr(settings, "SIGNING_KEY_SECRET", "") or settings.SECRET_KEY
    if secret != getattr(settings, "LOCAL_ONLY_SECRET_KEY", None):
        return []
    return [Error(LOCAL_ONLY_SECRET, id="contracts.E001")]
