"""API fixtures: the demo workspace (Atlas version 1 published, version 2 drafted; the refund
desk unpublished), service tokens of each kind, and a helper for bearer requests."""

from __future__ import annotations

import io

import pytest


@pytest.fixture
def demo(db):
    """`load_demo`: the demo people, both types, Atlas v1 published and v2 drafted."""
    from django.core.management import call_command

    from contracts.models import DecisionType

    call_command("load_demo", stdout=io.StringIO())
    return {t.key: t for t in DecisionType.objects.all()}


@pytest.fixture
def olivia(demo):
    from django.contrib.auth import get_user_model

    return get_user_model().objects.get(username="olivia")


ATLAS = "credit.review.continuation"
REFUND = "refund.eligibility"


@pytest.fixture
def token_for(olivia, demo):
    """token_for(*keys, revoked=False) -> the secret of a new token for those types."""
    from publishing import tokens

    def make(*keys: str, revoked: bool = False) -> str:
        token, secret = tokens.token_create(
            actor=olivia, name="retrieval service", decision_types=[demo[k] for k in keys]
        )
        if revoked:
            tokens.token_revoke(actor=olivia, token=token)
        return secret

    return make


@pytest.fixture
def call(client):
    """call(method, path, secret=None, **extra) -> the response, with the bearer header."""

    def request(method: str, path: str, secret: str | None = None, **extra):
        headers = dict(extra.pop("headers", {}))
        if secret is not None:
            headers["Authorization"] = f"Bearer {secret}"
        return getattr(client, method)(path, headers=headers, **extra)

    return request
