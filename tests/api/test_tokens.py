"""Service tokens: created by an owner for types they own, shown once, stored hashed,
revocable, audited; the token page and its permissions."""

from __future__ import annotations

import hashlib

import pytest
from django.core.exceptions import PermissionDenied

from tests.api.conftest import ATLAS


@pytest.fixture
def rafael(demo):
    from django.contrib.auth import get_user_model

    return get_user_model().objects.get(username="rafael")


def test_a_token_keeps_only_the_hash_of_its_secret_and_is_audited(olivia, demo):
    from contracts.models import AuditEvent
    from publishing import tokens
    from publishing.models import ServiceToken

    token, secret = tokens.token_create(actor=olivia, name="svc", decision_types=[demo[ATLAS]])
    stored = ServiceToken.objects.get()
    assert stored.secret_sha256 == hashlib.sha256(secret.encode()).hexdigest()
    assert secret.startswith(stored.prefix) and len(stored.prefix) < len(secret) // 3
    assert secret not in str(list(ServiceToken.objects.values()))
    event = AuditEvent.objects.filter(action=tokens.TOKEN_CREATED).get()
    assert event.decision_type == demo[ATLAS] and event.actor == olivia
    assert secret not in str(event.changes) + event.summary
    tokens.token_revoke(actor=olivia, token=token)
    assert AuditEvent.objects.filter(action=tokens.TOKEN_REVOKED).count() == 1
    assert tokens.authenticate(secret) is None


def test_only_an_owner_of_every_chosen_type_may_create_a_token(rafael, demo, olivia):
    from publishing import tokens
    from publishing.models import ServiceToken

    # rafael reviews Atlas, owns nothing.
    with pytest.raises(PermissionDenied, match=ATLAS):
        tokens.token_create(actor=rafael, name="svc", decision_types=[demo[ATLAS]])
    assert not ServiceToken.objects.exists()


def test_someone_else_cannot_revoke_a_token(rafael, olivia, demo):
    from publishing import tokens

    token, _ = tokens.token_create(actor=olivia, name="svc", decision_types=[demo[ATLAS]])
    with pytest.raises(PermissionDenied):
        tokens.token_revoke(actor=rafael, token=token)


def test_the_page_shows_the_secret_once_and_lists_only_ones_own_tokens(client, olivia, rafael,
                                                                        demo):  # fmt: skip
    from publishing.models import ServiceToken

    client.force_login(olivia)
    page = client.get("/tokens/").content.decode()
    assert f'value="{demo[ATLAS].pk}"' in page
    response = client.post("/tokens/", {"name": "retrieval-eu", "decision_types": [demo[ATLAS].pk]})
    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store"
    token = ServiceToken.objects.get()
    secret = response.content.decode().split('id="token-secret">')[1].split("<")[0]
    assert hashlib.sha256(secret.encode()).hexdigest() == token.secret_sha256
    assert secret not in client.get("/tokens/").content.decode()
    client.force_login(rafael)
    listed = client.get("/tokens/").content.decode()
    assert token.prefix not in listed
    assert client.post(f"/tokens/{token.pk}/revoke/").status_code == 404


def test_the_page_refuses_a_type_one_does_not_own(client, rafael, demo):
    from publishing.models import ServiceToken

    client.force_login(rafael)  # reviews Atlas, owns nothing
    assert f'value="{demo[ATLAS].pk}"' not in client.get("/tokens/").content.decode()
    response = client.post("/tokens/", {"name": "x", "decision_types": [demo[ATLAS].pk]})
    # Owning no type at all, one may not post the form (an owner choosing another's: 422).
    assert response.status_code == 403
    assert not ServiceToken.objects.exists()


def test_revoking_on_the_page_makes_the_api_answer_401(client, olivia, token_for, call):
    from publishing.models import ServiceToken

    secret = token_for(ATLAS)
    token = ServiceToken.objects.get()
    client.force_login(olivia)
    assert client.post(f"/tokens/{token.pk}/revoke/").status_code == 302
    token.refresh_from_db()
    assert token.revoked_by == olivia
    assert call("get", f"/api/v1/types/{ATLAS}/bundle", secret).status_code == 401
