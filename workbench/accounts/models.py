"""The link between a workbench account and the person the identity provider vouches for."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class ProviderIdentity(models.Model):
    """One account's identity at the provider: its issuer and subject (`iss`, `sub`).

    A person is found by these, never by username or e-mail, which a provider may reassign;
    so a provider account can never take over a local one that shares its name.
    """

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="provider_identity"
    )
    issuer = models.CharField(max_length=255)
    subject = models.CharField(max_length=255)
    # The provider's groups at the last sign-in, to show an administrator why a person has
    # the roles they have.
    groups = models.JSONField(default=list, blank=True)
    last_sign_in = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["issuer", "subject"], name="one_account_per_identity")
        ]

    def __str__(self) -> str:
        return f"{self.subject} at {self.issuer}"
