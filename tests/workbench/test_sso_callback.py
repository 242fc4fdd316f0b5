"""Single sign-on without a browser: the provider's ID token checked in full at the callback
(a forged, tampered, expired or misdirected token is refused with a page, never a 500), the
group map, the environment that turns single sign-on on, idle sessions.

The callback tests stand in for the token endpoint (they hand the workbench the token a
forger would); the keys are the real test provider's (tests/identity_provider), whose JWKS
endpoint the workbench asks."""

from __future__ import annotations

import base64
import html
import json
import time
import urllib.request
from unittest import mock

import jwt
import pytest
from django.core.exceptions import ImproperlyConfigured
from identity_provider.harness import ACCESS_CONTACT, CLIENT_ID, GROUP_MAP
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from contracts import roles
from workbench.accounts.backends import Refusal
from workbench.accounts.mapping import ROLE_ORDER, SITE_GROUP_NAMES, parse_group_map
from workbench.accounts.views import REFUSALS
from workbench.settings.environment import load_environment

CALLBACK = "/sign-in/provider/done/"
NONCE = "nonce-of-this-sign-in"


@pytest.fixture
def provider(settings, identity_provider):
    for name, value in identity_provider.settings.items():
        setattr(settings, name, value)
    with urllib.request.urlopen(f"{identity_provider.issuer}/.well-known/jwks.json") as answer:
        identity_provider.kid = json.load(answer)["keys"][0]["kid"]
    return identity_provider


def claims(provider, **changes):
    now = int(time.time())
    base = {
        "iss": provider.issuer,
        "aud": CLIENT_ID,
        "sub": "subject-42",
        "iat": now,
        "exp": now + 300,
        "nonce": NONCE,
        "preferred_username": "priya",
        "groups": ["wb-atlas-review"],
    }
    base.update(changes)
    return {k: v for k, v in base.items() if v is not None}


def signed(provider, payload, key=None, algorithm="RS256"):
    return jwt.encode(
        payload, key or provider.key_pem, algorithm=algorithm, headers={"kid": provider.kid}
    )


def callback(client, id_token, userinfo):
    """The provider's redirect back, as after a sign-in this browser started."""
    session = client.session
    session["oidc_states"] = {
        "state-1": {"nonce": NONCE, "code_verifier": "v" * 64, "added_on": time.time()}
    }
    session.save()
    tokens = {"id_token": id_token, "access_token": "access"}
    with (
        mock.patch.object(OIDCAuthenticationBackend, "get_token", return_value=tokens),
        mock.patch.object(OIDCAuthenticationBackend, "get_userinfo", return_value=userinfo),
    ):
        return client.get(CALLBACK, {"code": "code-1", "state": "state-1"})


def page_text(response):
    return html.unescape(response.content.decode())


def refusal(reason):
    return REFUSALS[reason].format(provider="Test provider", contact=ACCESS_CONTACT)


def test_a_valid_token_signs_in_with_the_roles_its_groups_give(client, provider, atlas):
    from django.contrib.auth.models import User

    response = callback(client, signed(provider, claims(provider)), {"sub": "subject-42"})
    assert response.status_code == 302
    priya = User.objects.get(username="priya")
    assert int(client.session["_auth_user_id"]) == priya.pk
    assert roles.role_of(priya, atlas) == roles.Role.REVIEWER
    assert not priya.has_usable_password()


def test_a_session_opened_through_the_provider_ends_after_its_longest_time(
    client, provider, atlas, settings
):
    from workbench.accounts.middleware import SIGNED_IN_THROUGH_PROVIDER_AT

    callback(client, signed(provider, claims(provider)), {"sub": "subject-42"})
    assert client.get("/").status_code == 200
    session = client.session
    session[SIGNED_IN_THROUGH_PROVIDER_AT] -= settings.SSO_SESSION_MAX_SECONDS + 1
    session.save()
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"].startswith("/sign-in/")


def _other_key():
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _tampered(provider):
    """A genuine token whose payload was changed after signing (groups added)."""
    header, _, signature = signed(provider, claims(provider)).split(".")
    forged = claims(provider, groups=["wb-policy-owners", "wb-atlas-review"])
    payload = base64.urlsafe_b64encode(json.dumps(forged).encode()).rstrip(b"=").decode()
    return f"{header}.{payload}.{signature}"


FORGERIES = {
    "signed by another key": lambda p: signed(p, claims(p), key=_other_key()),
    "tampered after signing": _tampered,
    "expired": lambda p: signed(
        p, claims(p, iat=int(time.time()) - 7200, exp=int(time.time()) - 3600)
    ),
    "for another client": lambda p: signed(p, claims(p, aud="another-client")),
    "from another issuer": lambda p: signed(p, claims(p, iss="https://evil.example/o")),
    "without an expiry": lambda p: signed(p, claims(p, exp=None)),
    "for another sign-in (nonce)": lambda p: signed(p, claims(p, nonce="replayed")),
    "unsigned": lambda p: jwt.encode(claims(p), None, algorithm="none", headers={"kid": p.kid}),
    "without a key id": lambda p: jwt.encode(claims(p), p.key_pem, algorithm="RS256"),
    "not a token": lambda p: "not.a-token",
    "signed with the client's shared secret": lambda p: signed(
        p, claims(p), key="a-shared-secret-of-32-bytes-or-more", algorithm="HS256"
    ),
}


@pytest.mark.parametrize("forgery", FORGERIES, ids=list(FORGERIES))
def test_a_forged_tampered_or_expired_token_is_refused(client, provider, atlas, forgery):
    from django.contrib.auth.models import User

    response = callback(client, FORGERIES[forgery](provider), {"sub": "subject-42"})
    assert response.status_code == 403
    assert refusal(Refusal.TOKEN) in page_text(response)
    assert "_auth_user_id" not in client.session
    assert not User.objects.filter(username="priya").exists()


def test_a_provider_account_never_takes_over_a_local_one(client, provider, make_user):
    make_user("priya")
    response = callback(client, signed(provider, claims(provider)), {"sub": "subject-42"})
    assert response.status_code == 403
    assert refusal(Refusal.ACCOUNT_CONFLICT) in page_text(response)
    assert "_auth_user_id" not in client.session


def test_a_token_without_the_username_or_groups_claims_is_refused(client, provider):
    token = signed(provider, claims(provider, preferred_username=None))
    response = callback(client, token, {"sub": "subject-42"})
    assert response.status_code == 403
    assert refusal(Refusal.CLAIMS) in page_text(response)

    token = signed(provider, claims(provider, groups="wb-atlas-review"))
    response = callback(client, token, {"sub": "subject-42"})
    assert refusal(Refusal.CLAIMS) in page_text(response)

    token = signed(provider, claims(provider, preferred_username="p" * 151))
    response = callback(client, token, {"sub": "subject-42"})
    assert refusal(Refusal.CLAIMS) in page_text(response)


def test_user_info_about_another_subject_is_refused(client, provider):
    response = callback(client, signed(provider, claims(provider)), {"sub": "someone-else"})
    assert response.status_code == 403
    assert refusal(Refusal.TOKEN) in page_text(response)


def test_without_single_sign_on_its_pages_do_not_exist(client):
    assert client.get("/sign-in/provider/").status_code == 404
    assert client.get(CALLBACK, {"code": "c", "state": "s"}).status_code == 404


# --------------------------------------------------------------------------- the group map


def test_the_map_names_the_site_groups_and_roles_the_workbench_has():
    assert tuple(roles.GROUP_PERMISSIONS) == SITE_GROUP_NAMES
    assert tuple(roles.Role) == ROLE_ORDER


def test_the_strongest_role_any_group_gives_wins():
    group_map = parse_group_map(
        json.dumps(
            {
                "readers": {"roles": {"atlas": "viewer", "refund": "viewer"}},
                "owners": {"site_groups": ["Policy owners"], "roles": {"atlas": "owner"}},
            }
        )
    )
    assert group_map.roles_for(["readers", "owners", "unknown"]) == {
        "atlas": "owner",
        "refund": "viewer",
    }
    assert group_map.site_groups_for(["readers", "owners"]) == {"Policy owners"}
    assert group_map.mapped(["unknown", "readers"]) == ["readers"]
    assert group_map.managed_types() == {"atlas", "refund"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"g": {"site_groups": ["Admins"]}}', "g.site_groups: unknown site group 'Admins'"),
        ('{"g": {"roles": {"atlas": "boss"}}}', "g.roles.atlas: Input should be 'owner'"),
        ('{"g": {"rights": []}}', "g.rights: Extra inputs are not permitted"),
        ("[1, 2]", "Input should be an object"),
    ],
)
def test_a_malformed_map_is_refused_naming_what_is_wrong(text, expected):
    with pytest.raises(ValueError, match="not a valid group map") as raised:
        parse_group_map(text)
    assert expected in str(raised.value)


# --------------------------------------------------------------------------- the environment

GOOD = {
    "DJANGO_SECRET_KEY": "k" * 40 + "abcdefghij",
    "DJANGO_ALLOWED_HOSTS": "workbench.example.org",
    "DATABASE_URL": "postgres://db/workbench",
}


def test_single_sign_on_is_off_unless_a_client_is_configured():
    assert load_environment(GOOD).OIDC_RP_CLIENT_ID == ""


def test_single_sign_on_on_names_every_provider_value_it_lacks():
    with pytest.raises(ImproperlyConfigured) as raised:
        load_environment({**GOOD, "OIDC_RP_CLIENT_ID": "workbench"})
    message = str(raised.value)
    for name in (
        "OIDC_RP_CLIENT_SECRET",
        "OIDC_OP_ISSUER",
        "OIDC_OP_JWKS_ENDPOINT",
        "WORKBENCH_SSO_ACCESS_CONTACT",
        "WORKBENCH_SSO_GROUP_MAP",
    ):
        assert name in message
    assert "single sign-on is on: OIDC_RP_CLIENT_ID is set" in message


def test_a_bad_group_map_in_the_environment_is_named():
    with pytest.raises(ImproperlyConfigured) as raised:
        load_environment({**GOOD, "WORKBENCH_SSO_GROUP_MAP": '{"g": {"site_groups": ["x"]}}'})
    assert "WORKBENCH_SSO_GROUP_MAP: not a valid group map (g.site_groups" in str(raised.value)


def test_a_complete_single_sign_on_environment_is_typed():
    env = load_environment(
        {
            **GOOD,
            "OIDC_RP_CLIENT_ID": "workbench",
            "OIDC_RP_CLIENT_SECRET": "secret",
            "OIDC_OP_ISSUER": "https://id.example/realms/bank",
            "OIDC_OP_AUTHORIZATION_ENDPOINT": "https://id.example/auth",
            "OIDC_OP_TOKEN_ENDPOINT": "https://id.example/token",
            "OIDC_OP_USER_ENDPOINT": "https://id.example/userinfo",
            "OIDC_OP_JWKS_ENDPOINT": "https://id.example/certs",
            "WORKBENCH_SSO_GROUP_MAP": json.dumps(GROUP_MAP),
            "WORKBENCH_SSO_ACCESS_CONTACT": "the identity team",
            "WORKBENCH_BREAK_GLASS_USERNAME": "breakglass",
            "SESSION_IDLE_MINUTES": "30",
        }
    )
    assert env.WORKBENCH_SSO_GROUP_MAP.mapped(["wb-policy-owners"]) == ["wb-policy-owners"]
    assert env.SESSION_IDLE_MINUTES == 30


# --------------------------------------------------------------------------- idle sessions


def test_a_session_in_use_is_renewed_and_an_idle_one_ends(client, owner, settings):
    settings.SESSION_COOKIE_AGE = 600
    client.force_login(owner)
    session = client.session
    session["seen_at"] = int(time.time()) - 120  # last renewed two minutes ago
    session.save()
    response = client.get("/")
    assert response.status_code == 200
    assert response.cookies[settings.SESSION_COOKIE_NAME]["max-age"] == 600

    # Expired in the store (no request for longer than the idle time): signed out.
    session = client.session
    session.set_expiry(-1)
    session.save()
    assert client.get("/").status_code == 302


# --------------------------------------------------------------------------- production profile

SSO_ENVIRONMENT = {
    "OIDC_RP_CLIENT_ID": "evidence-workbench",
    "OIDC_RP_CLIENT_SECRET": "a-client-secret",
    "OIDC_OP_ISSUER": "https://id.bank.example/realms/bank",
    "OIDC_OP_AUTHORIZATION_ENDPOINT": "https://id.bank.example/realms/bank/auth",
    "OIDC_OP_TOKEN_ENDPOINT": "https://id.bank.example/realms/bank/token",
    "OIDC_OP_USER_ENDPOINT": "https://id.bank.example/realms/bank/userinfo",
    "OIDC_OP_JWKS_ENDPOINT": "https://id.bank.example/realms/bank/certs",
    "OIDC_OP_LOGOUT_ENDPOINT": "https://id.bank.example/realms/bank/logout",
    "WORKBENCH_SSO_GROUP_MAP": json.dumps(GROUP_MAP),
    "WORKBENCH_SSO_ACCESS_CONTACT": "the identity team",
    "WORKBENCH_BREAK_GLASS_USERNAME": "breakglass",
    "SESSION_IDLE_MINUTES": "45",
}
SHOW_SETTINGS = """
import json, django
django.setup()
from django.conf import settings
print(json.dumps({
    "enabled": settings.SSO_ENABLED,
    "local": settings.LOCAL_SIGN_IN_USERNAMES,
    "backends": settings.AUTHENTICATION_BACKENDS,
    "form_action": [str(source) for source in settings.SECURE_CSP["form-action"]],
    "pkce": settings.OIDC_USE_PKCE,
    "algorithm": settings.OIDC_RP_SIGN_ALGO,
    "idle": settings.SESSION_COOKIE_AGE,
    "axes": settings.AXES_LOCKOUT_PARAMETERS,
}))
"""


def test_the_production_profile_turns_single_sign_on_on_from_its_environment(tmp_path):
    import os
    import secrets
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_"))}
    env.update(
        SSO_ENVIRONMENT,
        DJANGO_SETTINGS_MODULE="workbench.settings.production",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
        DJANGO_ALLOWED_HOSTS="workbench.bank.example",
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        DJANGO_SECURE_PROXY_SSL_HEADER="X-Forwarded-Proto",
    )
    shown = subprocess.run(
        [sys.executable, "-c", SHOW_SETTINGS], env=env, cwd=root, capture_output=True, text=True
    )
    assert shown.returncode == 0, shown.stderr
    settings = json.loads(shown.stdout)
    assert settings["enabled"] is True
    assert settings["local"] == ["breakglass"]
    assert settings["backends"] == [
        "axes.backends.AxesStandaloneBackend",
        "workbench.accounts.backends.LocalPasswordBackend",
        "workbench.accounts.backends.ProviderBackend",
        "guardian.backends.ObjectPermissionBackend",
    ]
    assert settings["form_action"] == ["'self'", "https://id.bank.example"]
    assert (settings["pkce"], settings["algorithm"], settings["idle"]) == (True, "RS256", 2700)
    assert settings["axes"] == "workbench.accounts.backends.axes_lockout_parameters"

    deploy = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        env=env,
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert deploy.returncode == 0, deploy.stderr


def test_axes_counts_password_failures_by_username_and_address_and_never_the_providers(rf):
    from workbench.accounts.backends import axes_lockout_parameters

    request = rf.get("/")
    password = {"username": "olivia", "password": "wrong"}
    assert axes_lockout_parameters(request, password) == [["username", "ip_address"]]
    # A callback's credentials carry no username: axes, told to count by username alone,
    # records nothing for it, so no address is locked out of single sign-on.
    provider = {"nonce": NONCE, "code_verifier": "v" * 64}
    assert axes_lockout_parameters(request, provider) == ["username"]


# --------------------------------------------------------------------------- local passwords


def test_with_single_sign_on_on_a_local_session_ends_and_the_admin_refuses_local_passwords(
    client, provider, make_user
):
    from workbench.accounts.views import LOCAL_SIGN_IN_REFUSED

    olivia = make_user("olivia", superuser=True)
    olivia.is_staff = True
    olivia.save()
    client.force_login(olivia)
    assert client.get("/").status_code == 302  # her session opened with a password: ended

    response = client.post("/admin/login/", {"username": "olivia", "password": "olivia-password"})
    assert response.status_code == 200  # the form again: not signed in
    assert client.get("/").status_code == 302

    response = client.post("/sign-in/", {"username": "olivia", "password": "olivia-password"})
    assert LOCAL_SIGN_IN_REFUSED.format(provider="Test provider") in page_text(response)
    assert client.get("/").status_code == 302

    make_user("breakglass", superuser=True)
    response = client.post(
        "/sign-in/", {"username": "breakglass", "password": "breakglass-password"}
    )
    assert response.status_code == 302
    assert client.get("/").status_code == 200
