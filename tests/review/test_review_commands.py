"""The key and bundle commands, encryption of private keys at rest, and the demo."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings

from compiler.keys import load_public_keys
from contracts.models import AuditEvent, Bundle, ContractVersion, SigningKey
from publishing import signing

pytestmark = pytest.mark.django_db


def test_generate_signing_key_and_rotate(owner):
    out = io.StringIO()
    call_command("generate_signing_key", "olivia", stdout=out)
    first = SigningKey.objects.get(user=owner)
    assert out.getvalue().startswith(f"olivia: signing key {first.key_id}\n-----BEGIN PUBLIC KEY")
    with pytest.raises(CommandError, match="already has signing key"):
        call_command("generate_signing_key", "olivia", stdout=io.StringIO())
    call_command("generate_signing_key", "olivia", "--rotate", stdout=io.StringIO())
    assert SigningKey.objects.filter(user=owner).count() == 2
    assert signing.active_key(owner).key_id != first.key_id
    # The retired key still verifies what it signed.
    assert first.key_id in signing.trusted_public_keys()
    with pytest.raises(CommandError, match="nobody called"):
        call_command("generate_signing_key", "nobody")
    assert AuditEvent.objects.filter(action="signing_key.created").count() == 2


def test_private_keys_are_encrypted_at_rest(keys):
    stored = SigningKey.objects.get(pk=keys["owner"].pk)
    assert "PRIVATE KEY" not in stored.private_key_encrypted
    assert signing.private_key(stored)  # decrypts with the current secret


def test_the_secret_can_rotate_through_fallbacks(keys, settings):
    stored = SigningKey.objects.get(pk=keys["owner"].pk)
    with override_settings(SECRET_KEY="a-new-secret", SECRET_KEY_FALLBACKS=[settings.SECRET_KEY]):
        assert signing.private_key(stored)
        assert signing.signing_key_reencrypt() == 2
        stored.refresh_from_db()
    with override_settings(SECRET_KEY="a-new-secret", SECRET_KEY_FALLBACKS=[]):
        assert signing.private_key(stored)
    # The old secret alone no longer opens it.
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError, match="cannot be decrypted"):
        signing.private_key(stored)


def test_export_public_keys_is_what_the_compiler_loads(keys, tmp_path):
    out = io.StringIO()
    call_command("export_public_keys", str(tmp_path), stdout=out)
    assert set(load_public_keys(tmp_path)) == {keys["owner"].key_id, keys["reviewer"].key_id}
    assert (tmp_path / f"olivia-{keys['owner'].key_id}.pem").exists()


def test_export_bundle_refuses_a_version_without_one(draft, tmp_path):
    with pytest.raises(CommandError, match="never published"):
        call_command("export_bundle", draft.decision_type.key, "--version", "1", "-o", "x")
    with pytest.raises(CommandError, match="no published version"):
        call_command("export_bundle", draft.decision_type.key)
    with pytest.raises(CommandError, match="no version 9"):
        call_command("export_bundle", draft.decision_type.key, "--version", "9")


def test_export_bundle_to_stdout(published, capsysbinary):
    call_command("export_bundle", published.decision_type.key)
    assert capsysbinary.readouterr().out == published.data


def test_import_bundle_reports_a_missing_file(db, tmp_path):
    with pytest.raises(CommandError, match="No such file"):
        call_command("import_bundle", str(tmp_path / "missing.json"))


def test_load_demo_publishes_atlas_v1_and_drafts_v2_idempotently():
    call_command("load_demo", stdout=io.StringIO())
    atlas = ContractVersion.objects.filter(decision_type__key="credit.review.continuation")
    assert list(atlas.order_by("number").values_list("number", "status")) == [
        (1, "published"),
        (2, "draft"),
    ]
    bundle = Bundle.objects.get()
    signers = {(s["signer"], s["role"]) for s in bundle.document["signatures"]}
    assert signers == {("olivia", "publisher"), ("rafael", "approver")}
    v2 = atlas.get(number=2)
    assert v2.propositions.get(key="waiver_valid").accepted_classes == [
        "approved_waiver",
        "case_note",
    ]
    from publishing import review

    report = review.report_for(v2)
    assert report.summary["contract_changes"] == 2 and report.summary["newly_failing"] > 0
    before = (
        AuditEvent.objects.count(),
        SigningKey.objects.count(),
        ContractVersion.objects.count(),
    )
    call_command("load_demo", stdout=io.StringIO())
    assert (
        AuditEvent.objects.count(),
        SigningKey.objects.count(),
        ContractVersion.objects.count(),
    ) == before


def test_review_version_walks_the_flow_from_the_command_line(suite, draft, owner, reviewer, keys):
    key = draft.decision_type.key

    def run(action, user, *extra):
        out = io.StringIO()
        call_command("review_version", key, action, "--version", "1", "--user", user, *extra,
                     stdout=out)  # fmt: skip
        return out.getvalue()

    assert run("submit", "olivia").endswith("version 1 is in review\n")
    with pytest.raises(CommandError, match="olivia: You are not allowed"):
        run("approve", "olivia")
    out = run("approve", "rafael", "--comment", "ok")
    assert "would be the first published contract" in out and "report sha256 " in out
    assert out.endswith("version 1 is approved\n")
    with pytest.raises(CommandError, match="not allowed"):
        run("publish", "rafael")
    out = run("publish", "olivia")
    assert Bundle.objects.get().sha256 in out and out.endswith("version 1 is published\n")


def test_the_built_in_secret_is_refused_when_debug_is_off(settings):
    """The private signing keys are encrypted under it: a deployment must bring its own."""
    from publishing import checks

    settings.DEBUG = False
    settings.SECRET_KEY = settings.LOCAL_ONLY_SECRET_KEY
    settings.SIGNING_KEY_SECRET = ""
    assert [e.id for e in checks.signing_secret_is_not_the_local_default()] == ["contracts.E001"]
    settings.SIGNING_KEY_SECRET = "a secret of our own"
    assert checks.signing_secret_is_not_the_local_default() == []
    settings.DEBUG = True
    settings.SIGNING_KEY_SECRET = ""
    assert checks.signing_secret_is_not_the_local_default() == []
