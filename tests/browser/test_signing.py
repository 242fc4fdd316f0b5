"""Signatures that mean the person signed, in a real browser: a reviewer creates
their Ed25519 key in Chromium (WebCrypto, non-extractable, kept in IndexedDB) and approves,
the signature made in the page by signing.js; a second reviewer registers a key file's public
half and pastes a statement signed with `evidence-compiler sign-approval`; the owner creates
a key in the page and publishes. The bundle verifies offline with the exported key set, and
no table and no log line holds private key material."""

from __future__ import annotations

import base64
import io
import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def workspace(atlas, owner, reviewer, make_user):
    from contracts import demo as contracts_demo
    from contracts import roles, services
    from publishing import review
    from scenarios import demo

    contracts_demo.create_contract(contracts_demo.REFUND_DESK, owner=owner)
    demo.load(io.StringIO(), queue_runs=False)
    second = make_user("rhea", roles.RISK_REVIEWERS)
    services.access_grant(actor=owner, decision_type=atlas, user=second, role=roles.Role.REVIEWER)
    first = atlas.versions.get(number=1)
    review.version_submit(actor=owner, version=first, expected_lock_version=first.lock_version)
    return atlas


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "compiler_tools", *args], cwd=ROOT, capture_output=True, text=True
    )


def test_keys_made_and_used_in_the_browser_sign_a_bundle_that_verifies_offline(
    live_server, new_page, sign_in, create_key_in_page, workspace, tmp_path, caplog
):
    from cryptography.hazmat.primitives import serialization
    from django.apps import apps
    from django.core.management import call_command
    from playwright.sync_api import expect

    from compiler_trust import load_private_key_file, private_key_pem
    from contracts.models import Approval, Bundle, SigningKey

    caplog.set_level(logging.DEBUG)
    key = workspace.key
    review_url = f"{live_server.url}/types/{key}/v1/review/"
    impact_url = f"{live_server.url}/types/{key}/v1/impact/"

    # rafael creates his key in Chromium: only the public half reaches the workbench.
    rafael = new_page()
    sign_in(rafael, "rafael")
    rafael_key = create_key_in_page(rafael)
    registered = SigningKey.objects.get(key_id=rafael_key)
    assert registered.origin == "browser" and not registered.private_key_encrypted
    assert (
        rafael.evaluate(
            """() => new Promise((resolve) => {
            const open = indexedDB.open("evidence-workbench-keys", 1);
            open.onsuccess = () => {
                const get = open.result.transaction("keys").objectStore("keys").get("signing-key");
                get.onsuccess = () => resolve(get.result.privateKey.extractable);
            };
        })"""
        )
        is False
    )

    # He approves; signing.js signs the statement the page shows with that key.
    rafael.goto(impact_url)
    rafael.get_by_role("button", name="Approve version 1 with this report").click()
    rafael.wait_for_url(review_url)
    expect(rafael.locator("[data-status]")).to_have_attribute("data-status", "approved")
    approval = Approval.objects.get(reviewer__username="rafael")
    assert approval.statement["key_id"] == rafael_key and approval.signature

    # rhea keeps her key in a file (keygen) and pastes what sign-approval wrote.
    made = cli("keygen", "rhea", "--out", str(tmp_path / "rhea-keys"))
    assert made.returncode == 0, made.stderr
    rhea = new_page()
    sign_in(rhea, "rhea")
    rhea.goto(live_server.url + "/signing-keys/")
    rhea.get_by_label("Public key (PEM)").fill((tmp_path / "rhea-keys/rhea.pub.pem").read_text())
    rhea.get_by_role("button", name="Register this public key").click()
    expect(rhea.locator("#my-key-id")).to_be_visible()
    rhea.goto(impact_url)
    shown = rhea.locator("#approve [data-statement]").get_attribute("data-statement")
    (tmp_path / "statement.json").write_bytes(base64.b64decode(shown))
    signed = cli(
        "sign-approval", str(tmp_path / "statement.json"),
        "--key", str(tmp_path / "rhea-keys/rhea.key"),
    )  # fmt: skip
    assert signed.returncode == 0, signed.stderr
    rhea.locator("#approve-signed").fill(signed.stdout)
    rhea.get_by_role("button", name="Approve version 1 with this report").click()
    rhea.wait_for_url(review_url)
    assert Approval.objects.filter(reviewer__username="rhea").exists()

    # olivia creates her key in the page too and publishes, signing in the page.
    olivia = new_page()
    sign_in(olivia, "olivia")
    create_key_in_page(olivia)
    olivia.goto(review_url)
    olivia.get_by_role("button", name="Publish version 1").click()
    expect(olivia.locator("[data-status]")).to_have_attribute("data-status", "published")
    bundle = Bundle.objects.get()
    signers = {(s["signer"], s["role"]) for s in bundle.document["signatures"]}
    assert signers == {("olivia", "publisher"), ("rafael", "approver"), ("rhea", "approver")}
    assert all(s["statement"] for s in bundle.document["signatures"])

    # Offline: the exported key set is all a verifier needs.
    call_command("export_public_keys", str(tmp_path / "trusted"), stdout=io.StringIO())
    (tmp_path / "bundle.json").write_bytes(bundle.data)
    checked = cli("verify-bundle", str(tmp_path / "bundle.json"), "--public-key",
                  str(tmp_path / "trusted"), "--require-approvals", "2")  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr
    stricter = cli("verify-bundle", str(tmp_path / "bundle.json"), "--public-key",
                   str(tmp_path / "trusted"), "--require-approvals", "3")  # fmt: skip
    assert stricter.returncode == 1

    # No private key material in any table or in the logs.
    private = load_private_key_file(tmp_path / "rhea-keys/rhea.key")
    raw = private.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
    pem = private_key_pem(private)
    needles = [
        b"PRIVATE KEY",
        raw,
        raw.hex().encode(),
        base64.b64encode(raw),
        base64.urlsafe_b64encode(raw).rstrip(b"="),
        b"".join(pem.splitlines()[1:-1]),
    ]
    stored = []
    for model in apps.get_models():
        for row in model._default_manager.all().values():
            for value in row.values():
                if isinstance(value, (bytes, memoryview)):
                    stored.append(bytes(value))
                else:
                    stored.append(json.dumps(value, default=str).encode())
    logged = [caplog.text.encode()] + [str(record.__dict__).encode() for record in caplog.records]
    assert len(stored) > 100  # every table was read
    for blob in stored + logged:
        for needle in needles:
            assert needle not in blob
