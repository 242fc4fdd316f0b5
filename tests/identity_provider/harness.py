"""The `identity_provider` fixture: the test provider (`serve`) started in its own process on
a free port of 127.0.0.1 for the test session, with the people below, and the workbench
settings that point single sign-on at it (`provider.settings`, for override_settings).

Imports only the standard library and pytest at module level: the root conftest loads it as a
plugin in every test run, Django or not.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
CLIENT_ID = "evidence-workbench"
# Who the provider knows, and their groups there (the group map below gives them meaning).
PEOPLE = [
    {"username": "priya", "groups": ["wb-policy-owners", "wb-atlas-review"]},
    {"username": "ravi", "groups": ["wb-atlas-review"]},
    {"username": "una", "groups": ["sales-team"]},
]
GROUP_MAP = {
    "wb-policy-owners": {"site_groups": ["Policy owners"]},
    "wb-atlas-review": {
        "site_groups": ["Risk reviewers"],
        "roles": {"credit.review.continuation": "reviewer"},
    },
}
ACCESS_CONTACT = "the identity team (identity@bank.example)"
PROVIDER_NAME = "Test provider"


def password_of(username: str) -> str:
    return f"{username}-at-the-provider"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Provider:
    url: str
    admin_token: str
    client_secret: str
    key_pem: bytes
    process: subprocess.Popen[bytes]
    log: Path
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def issuer(self) -> str:
        return f"{self.url}/o"

    def set_groups(self, username: str, groups: list[str]) -> None:
        """Change a person's groups at the provider, as its administrators would."""
        request = urllib.request.Request(
            f"{self.url}/test/groups/",
            data=json.dumps({"username": username, "groups": groups}).encode(),
            headers={"X-Test-Token": self.admin_token, "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.status == 204


def _wait_until_serving(provider: Provider) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if provider.process.poll() is not None:
            raise AssertionError(f"the test provider stopped:\n{provider.log.read_text()}")
        try:
            discovery = f"{provider.issuer}/.well-known/openid-configuration"
            with urllib.request.urlopen(discovery, timeout=2):
                return
        except (OSError, urllib.error.HTTPError):
            time.sleep(0.2)
    raise AssertionError(f"the test provider did not answer:\n{provider.log.read_text()}")


@pytest.fixture(scope="session")
def identity_provider(tmp_path_factory: pytest.TempPathFactory, live_server: Any):
    """The provider, serving; `.settings` turns single sign-on on against it."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    from workbench.accounts.mapping import parse_group_map
    from workbench.settings import base
    from workbench.settings.single_sign_on import single_sign_on

    state = tmp_path_factory.mktemp("identity-provider")
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    (state / "signing-key.pem").write_bytes(key_pem)
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    client_secret = secrets.token_urlsafe(32)
    workbench_urls = {live_server.url, live_server.url.replace("localhost", "127.0.0.1")}
    (state / "client.json").write_text(
        json.dumps(
            {
                "client_id": CLIENT_ID,
                "client_secret": client_secret,
                "redirect_uris": [f"{u}/sign-in/provider/done/" for u in sorted(workbench_urls)],
                "post_logout_redirect_uris": [f"{u}/sign-in/" for u in sorted(workbench_urls)],
            }
        )
    )
    people = [
        {
            **person,
            "email": f"{person['username']}@bank.example",
            "password": password_of(str(person["username"])),
        }
        for person in PEOPLE
    ]
    (state / "people.json").write_text(json.dumps(people))
    admin_token = secrets.token_urlsafe(16)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(HERE.parent), os.environ.get("PYTHONPATH", "")]),
        "OIDC_PROVIDER_DIR": str(state),
        "OIDC_PROVIDER_ISSUER": f"{url}/o",
        "OIDC_PROVIDER_ADMIN_TOKEN": admin_token,
    }
    env.pop("DJANGO_SETTINGS_MODULE", None)
    log = state / "provider.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "identity_provider.serve",
                str(port),
                str(state / "client.json"),
                str(state / "people.json"),
            ],
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    provider = Provider(url, admin_token, client_secret, key_pem, process, log)
    try:
        _wait_until_serving(provider)
        issuer = provider.issuer
        provider.settings = single_sign_on(
            issuer=issuer,
            client_id=CLIENT_ID,
            client_secret=client_secret,
            authorization_endpoint=f"{issuer}/authorize/",
            token_endpoint=f"{issuer}/token/",
            userinfo_endpoint=f"{issuer}/userinfo/",
            jwks_endpoint=f"{issuer}/.well-known/jwks.json",
            logout_endpoint=f"{issuer}/logout/",
            group_map=parse_group_map(json.dumps(GROUP_MAP)),
            provider_name=PROVIDER_NAME,
            access_contact=ACCESS_CONTACT,
            break_glass_username="breakglass",
            backends=list(base.AUTHENTICATION_BACKENDS),
            csp=base.SECURE_CSP,
        )
        yield provider
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
