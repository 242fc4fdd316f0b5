"""Bundles: byte-identical exports, verification against the workbench's keys, import that
refuses altered bundles and unknown keys with nothing written, and an export -> import ->
export round trip."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import transaction

from compiler_trust import (
    BundleInvalid,
    Problem,
    assemble_bundle,
    generate_key_pair,
    inspect_bundle,
    parse_signed_statement,
    serialize_bundle,
    sign_bundle,
)
from contracts import demo, services
from contracts.models import AuditEvent, Bundle, ContractVersion, DecisionType, SourceClass
from publishing import review, signing

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]


def export(decision_type: str, number: int, path: Path) -> bytes:
    call_command(
        "export_bundle",
        decision_type,
        "--version",
        str(number),
        "-o",
        str(path),
        stderr=io.StringIO(),
    )
    return path.read_bytes()


def counts() -> tuple[int, ...]:
    return (
        DecisionType.objects.count(),
        ContractVersion.objects.count(),
        Bundle.objects.count(),
        SourceClass.objects.count(),
        AuditEvent.objects.count(),
    )


class Rollback(Exception):
    pass


def approve(version, reviewer, devices):
    version.refresh_from_db()
    report = review.report_for(version)
    # Version 2 makes a required proposition optional: a widening of the contract the
    # reviewer acknowledges (and their signed approval names).
    devices.approve(
        actor=reviewer, version=version, report_sha256=report.sha256,
        acknowledged_widenings=report.widening_ids,
    )  # fmt: skip


def publish_refund_desk(owner, reviewer, devices) -> list[bytes]:
    """The refund desk with its demo scenario, published as version 1 and then version 2
    (which stops blocking on `exception_approved`); returns both bundles' bytes."""
    from scenarios import demo as scenarios_demo
    from scenarios import services as scenario_services

    decision_type = demo.create_contract(demo.REFUND_DESK, owner=owner, reviewers=[reviewer])
    corpus = scenario_services.corpus_import(
        actor=owner,
        decision_type=decision_type,
        name="refund-desk",
        document={
            "directory": scenarios_demo.REFUND_DIRECTORY,
            "candidates": scenarios_demo.REFUND_DESK,
        },
    )
    spec = next(s for s in scenarios_demo.SCENARIOS if s.decision_type == decision_type.key)
    scenario_services.scenario_create(
        actor=owner,
        decision_type=decision_type,
        corpus=corpus,
        name=spec.name,
        expected_slots=spec.expected_slots,
        expected_rejected=spec.expected_rejected,
        **spec.request,
    )
    reviewer = type(reviewer).objects.get(pk=reviewer.pk)
    out = []
    version = decision_type.versions.get(number=1)
    for number in (1, 2):
        if number == 2:
            version = services.version_start_draft(actor=owner, decision_type=decision_type)
            proposition = version.propositions.get(key="exception_approved")
            services.proposition_update(
                actor=owner,
                proposition=proposition,
                expected_lock_version=version.lock_version,
                key="exception_approved",
                description=proposition.description,
                required=False,
                max_items=1,
            )
            version.refresh_from_db()
        review.version_submit(
            actor=owner, version=version, expected_lock_version=version.lock_version
        )
        approve(version, reviewer, devices)
        out.append(devices.publish(actor=owner, version=version).data)
    return out


@pytest.fixture
def exported(catalogue, owner, reviewer, keys, devices):
    """Both refund-desk bundles, exported from a workbench state that is then rolled back:
    the database keeps the people, the catalogue and the keys, but not the type."""
    before = counts()
    try:
        with transaction.atomic():
            data = publish_refund_desk(owner, reviewer, devices)
            raise Rollback
    except Rollback:
        pass
    assert counts() == before
    return data


# --------------------------------------------------------------------------- bytes


def test_exporting_the_same_version_twice_gives_identical_bytes(published, tmp_path):
    key = published.decision_type.key
    first = export(key, 1, tmp_path / "a.json")
    second = export(key, 1, tmp_path / "b.json")
    assert first == second == published.data
    assert first.endswith(b"}\n") and b"\n" not in first[:-1]


def test_assembling_the_same_body_again_gives_the_same_bytes(published):
    """Nothing in the bundle depends on when or how often it is built, so the stored bytes
    are reproducible from the rows and the signed statements they came from."""
    document = published.document
    manifest = document["manifest"]
    version = published.version
    body = review.bundle_body(
        version,
        publisher=manifest["publisher"]["person"],
        approvers=[a["person"] for a in manifest["approvers"]],
        published_at=published.published_at,
        parent_sha256=manifest["parent_sha256"],
        key_ids={a["person"]: a["key_id"] for a in manifest["approvers"]}
        | {manifest["publisher"]["person"]: manifest["publisher"]["key_id"]},
        report_sha256=manifest["report_sha256"],
    )
    statements = [
        parse_signed_statement({"statement": s["statement"], "signature": s["signature"]})
        for s in document["signatures"]
    ]
    rebuilt = assemble_bundle(body, statements[0], statements[1:])
    assert serialize_bundle(rebuilt) == published.data


def test_the_bundle_says_who_wrote_approved_and_published_it(published):
    bundle = inspect_bundle(published.data)
    manifest = bundle.manifest
    assert (manifest.author, manifest.publisher.person, manifest.approver_names) == (
        "olivia",
        "olivia",
        ("rafael",),
    )
    assert [e.person for e in manifest.editors] == ["olivia"]
    assert manifest.version == "1" and manifest.parent_sha256 is None
    assert manifest.published_at.endswith("+00:00")
    assert {s.key_id for s in bundle.signatures} == set(signing.trusted_public_keys())
    names = {s.name for s in bundle.scenarios}
    assert "Atlas: Maya's annual review" in names
    revoked = next(s for s in bundle.scenarios if s.name == "Atlas: through a revoked delegation")
    # A scenario expecting a refusal expects it of every slot, in the bundle as in the workbench.
    slots = ("continuation_rule", "facility_limit", "review_open", "waiver_valid")
    assert revoked.expected.slots == dict.fromkeys(slots, "refused")


def test_the_compiler_cli_verifies_an_exported_bundle(published, tmp_path):
    path = tmp_path / "bundle.json"
    export(published.decision_type.key, 1, path)
    call_command("export_public_keys", str(tmp_path / "keys"), stdout=io.StringIO())
    done = subprocess.run(
        [sys.executable, "-m", "compiler_tools", "verify-bundle", str(path), "--public-key",
         str(tmp_path / "keys")],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert published.sha256 in done.stdout


def test_a_service_compiles_the_published_scenarios_against_the_bundle(published, tmp_path):
    """What a retrieval service does without Django: verify, then compile each scenario the
    bundle carries and find the expectations the workbench published."""
    path = tmp_path / "bundle.json"
    export(published.decision_type.key, 1, path)
    call_command("export_public_keys", str(tmp_path / "keys"), stdout=io.StringIO())
    # Two scenarios (a subprocess each): the seed's case and the contaminated pool.
    wanted = {"Atlas: Maya's annual review", "Atlas: a contaminated pool"}
    for scenario in published.document["scenarios"]:
        if scenario["name"] not in wanted:
            continue
        request = tmp_path / "input.json"
        request.write_text(
            json.dumps(
                {
                    "request": scenario["request"],
                    "directory": scenario["corpus"]["directory"],
                    "candidates": scenario["corpus"]["candidates"],
                }
            )
        )
        done = subprocess.run(
            [sys.executable, "-m", "compiler_tools", "compile", "--bundle", str(path),
             "--public-key", str(tmp_path / "keys"), str(request)],
            capture_output=True, text=True, cwd=ROOT, check=False,
        )  # fmt: skip
        assert done.returncode == 0, (scenario["name"], done.stderr)
        output = json.loads(done.stdout)
        states = {slot["proposition"]: slot["state"] for slot in output["slots"]}
        assert states | scenario["expected"]["slots"] == states, scenario["name"]


# --------------------------------------------------------------------------- import


def test_export_import_export_round_trips_to_the_same_bytes(exported, tmp_path):
    first, second = exported
    for number, data in ((1, first), (2, second)):
        path = tmp_path / f"in-{number}.json"
        path.write_bytes(data)
        out = io.StringIO()
        call_command("import_bundle", str(path), stdout=out)
        assert out.getvalue().startswith("Imported refund.eligibility version")
        assert export("refund.eligibility", number, tmp_path / f"out-{number}.json") == data
    one, two = ContractVersion.objects.filter(decision_type__key="refund.eligibility").order_by(
        "number"
    )
    assert (one.status, two.status) == ("superseded", "published")
    assert two.bundle.parent == one.bundle
    assert [p.required for p in two.propositions.all()] == [True, True, False]
    assert two.snapshot == json.loads(second)["contract"]
    # Importing the same file again changes nothing.
    before = counts()
    out = io.StringIO()
    call_command("import_bundle", str(tmp_path / "in-2.json"), stdout=out)
    assert out.getvalue().startswith("Already here:")
    assert counts() == before


def test_the_approval_in_a_bundle_names_the_contract_widening_it_acknowledged(exported):
    first, second = exported
    statements = {
        number: next(s["statement"] for s in json.loads(data)["signatures"]
                     if s["role"] == "approver")
        for number, data in ((1, first), (2, second))
    }  # fmt: skip
    assert statements[1]["acknowledged_widenings"] == []
    assert statements[2]["acknowledged_widenings"] == ["requirement_dropped:exception_approved"]


def test_bundles_import_only_in_the_order_they_were_published(exported, tmp_path):
    path = tmp_path / "v2.json"
    path.write_bytes(exported[1])
    before = counts()
    with pytest.raises(CommandError, match="import the bundles in the order"):
        call_command("import_bundle", str(path))
    assert counts() == before


def flipped(data: bytes, index: int) -> bytes:
    altered = bytearray(data)
    altered[index] = altered[index] ^ 0x01 if altered[index] != 0x0A else 0x20
    return bytes(altered)


def test_changing_any_single_byte_makes_import_refuse_with_nothing_written(exported, tmp_path):
    """A sample of positions (the compiler's own tests flip every byte of a bundle at the
    pure level): every 61st byte, plus each byte of the manifest, of the sha256 and of the
    first signature, and the final newline."""
    data = exported[0]
    text = data.decode()
    marks = []
    for needle, length in (('"manifest"', 200), ('"sha256":"', 74), ('"signature":"', 100)):
        start = text.index(needle)
        marks.extend(range(start, min(start + length, len(data))))
    positions = sorted(set(range(0, len(data), 61)) | set(marks) | {len(data) - 1})
    path = tmp_path / "altered.json"
    before = counts()
    problems = set()
    for index in positions:
        path.write_bytes(flipped(data, index))
        with pytest.raises(CommandError) as raised:
            call_command("import_bundle", str(path))
        assert str(raised.value).startswith("Refused, nothing imported:"), index
        # The service's own refusal, which the command reports (`raise ... from None` hides
        # it from the traceback but keeps it as the context): one import per position.
        refusal = raised.value.__context__
        assert isinstance(refusal, BundleInvalid), index
        problems.add(refusal.problem)
    assert counts() == before
    assert len(positions) > 400
    assert {Problem.ALTERED, Problem.MALFORMED} <= problems


def body_to_resign(data: bytes) -> dict:
    """A bundle's body without the key ids its publisher and approvers signed with, for
    `sign_bundle` to fill in with other keys (as a forger would)."""
    document = json.loads(data)
    body = {k: v for k, v in document.items() if k not in ("sha256", "signatures")}
    manifest = body["manifest"]
    manifest["publisher"] = {"person": manifest["publisher"]["person"]}
    manifest["approvers"] = [{"person": a["person"]} for a in manifest["approvers"]]
    return body


def test_a_bundle_signed_by_an_unknown_key_is_refused(exported, tmp_path, owner, devices):
    stranger_key, _ = generate_key_pair()
    approver_key = devices.private_key(type(owner).objects.get(username="rafael"))
    body = body_to_resign(exported[0])
    forged = serialize_bundle(
        sign_bundle(
            body, [("olivia", "publisher", stranger_key), ("rafael", "approver", approver_key)]
        )
    )
    path = tmp_path / "forged.json"
    path.write_bytes(forged)
    before = counts()
    with pytest.raises(CommandError, match="unknown key"):
        call_command("import_bundle", str(path))
    assert counts() == before


def test_a_known_key_under_someone_elses_name_is_refused(
    exported, tmp_path, make_user, devices, key_from_before
):
    rhea_user = make_user("rhea")
    key_from_before(rhea_user)
    rhea = devices.private_key(rhea_user)
    rafael = devices.private_key(type(rhea_user).objects.get(username="rafael"))
    # Olivia's signature is made with rhea's key: a valid signature, by the wrong owner.
    swapped = serialize_bundle(
        sign_bundle(
            body_to_resign(exported[0]),
            [("olivia", "publisher", rhea), ("rafael", "approver", rafael)],
        )
    )
    with pytest.raises(BundleInvalid) as raised:
        review.bundle_import(actor=None, data=swapped)
    assert raised.value.problem == Problem.WRONG_SIGNER


def test_only_superusers_import_from_the_browser_side(exported, owner):
    from django.core.exceptions import PermissionDenied

    with pytest.raises(PermissionDenied):
        review.bundle_import(actor=owner, data=exported[0])
