"""The key and bundle commands, legacy keys, and the demo."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from compiler_trust import load_public_keys
from contracts.models import Approval, AuditEvent, Bundle, ContractVersion, SigningKey
from publishing import signing

pytestmark = pytest.mark.django_db


def test_register_rotate_and_revoke_a_key_file(owner, tmp_path):
    from compiler_trust import write_key_files

    _, first_pub = write_key_files(tmp_path, "first")
    _, second_pub = write_key_files(tmp_path, "second")
    out = io.StringIO()
    call_command("register_signing_key", "olivia", str(first_pub), stdout=out)
    first = SigningKey.objects.get(user=owner)
    assert out.getvalue() == f"olivia: signing key {first.key_id}\n"
    assert (first.origin, first.private_key_encrypted) == ("cli", "")
    with pytest.raises(CommandError, match="already registered"):
        call_command("register_signing_key", "olivia", str(first_pub), stdout=io.StringIO())
    call_command("register_signing_key", "olivia", str(second_pub), stdout=io.StringIO())
    assert signing.active_key(owner).key_id != first.key_id
    # The rotated-out key still verifies what it signed.
    assert first.key_id in signing.trusted_public_keys()
    call_command("register_signing_key", "olivia", "--revoke", first.key_id, stdout=io.StringIO())
    first.refresh_from_db()
    assert first.revoked_at is not None
    exported = signing.trusted_public_keys()[first.key_id]
    assert exported.revoked_at == first.revoked_at.isoformat()
    with pytest.raises(CommandError, match="nobody called"):
        call_command("register_signing_key", "nobody", str(first_pub))
    actions = list(AuditEvent.objects.values_list("action", flat=True).order_by("id"))
    assert actions == ["signing_key.registered", "signing_key.registered", "signing_key.revoked"]


def test_a_legacy_key_cannot_sign_new_approvals(submitted, reviewer, keys, devices):
    from django.core.exceptions import ValidationError

    from publishing import review

    SigningKey.objects.filter(pk=keys["reviewer"].pk).update(origin="legacy")
    report = review.report_for(submitted)
    with pytest.raises(ValidationError, match="no signing key of their own"):
        devices.approve(actor=reviewer, version=submitted, report_sha256=report.sha256)


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


def test_review_version_walks_the_flow_from_the_command_line(
    suite, draft, owner, reviewer, keys, devices
):
    key = draft.decision_type.key

    def run(action, user, *extra, key_dir=str(devices.directory)):
        out = io.StringIO()
        call_command("review_version", key, action, "--version", "1", "--user", user,
                     "--key-dir", key_dir, *extra, stdout=out)  # fmt: skip
        return out.getvalue()

    assert run("submit", "olivia").endswith("version 1 is in review\n")
    # Approving signs with the person's key file: without one nothing is approved.
    with pytest.raises(CommandError, match="pass --key-dir DIR"):
        run("approve", "rafael", key_dir="")
    assert not Approval.objects.exists()
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
