"""API fixtures: the demo workspace (Atlas version 1 published, version 2 drafted; the refund
desk unpublished), service tokens of each kind, and a helper for bearer requests."""

from __future__ import annotations

import pytest


@pytest.fixture
def demo(db):
    """`load_demo`: the demo people, both types, Atlas v1 published and v2 drafted."""
    from shared_world import WORLD

    from contracts.models import DecisionType

    WORLD.insert("demo")
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


def atlas_request() -> dict:
    """The seed's Atlas compile input without its contract: what a service sends."""
    import json
    from pathlib import Path

    document = json.loads((Path(__file__).resolve().parents[2] / "examples/atlas.json").read_text())
    return {k: v for k, v in document.items() if k != "contract"}


@pytest.fixture
def atlas_receipt(demo):
    """receipt(decision_id=None) -> a receipt of the Atlas request compiled against the
    published Atlas bundle, as production would post it."""
    from compiler import compile_input
    from compiler_trust import compile_input_from_bundle, make_receipt, verify_bundle
    from publishing import signing, tokens

    bundle = tokens.latest_bundle(demo[ATLAS])
    verified = verify_bundle(bundle.data, signing.trusted_public_keys())

    def make(decision_id: str | None = None) -> dict:
        document = compile_input_from_bundle(verified, atlas_request())
        output = compile_input(document)
        return make_receipt(
            document, output, bundle_sha256=verified.sha256, decision_id=decision_id
        ).to_json()

    return make
