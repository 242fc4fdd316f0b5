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
from django.core.exceptions import ValidationError
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
    verify_suite,
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


def publish_refund_desk(owner, reviewer, devices, suites=None) -> list[bytes]:
    """The refund desk with its demo scenario, published as version 1 and then version 2
    (which stops blocking on `exception_approved`); returns both bundles' bytes (and adds
    their test suites' to `suites`, when given)."""
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
        bundle = devices.publish(actor=owner, version=version)
        out.append(bundle.data)
        if suites is not None:
            suites.append(bundle.test_suite.data)
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


@pytest.fixture
def exported_with_suites(catalogue, owner, reviewer, keys, devices):
    """`exported`, each bundle with its test suite: [(bundle, suite), (bundle, suite)]."""
    suites: list[bytes] = []
    try:
        with transaction.atomic():
            data = publish_refund_desk(owner, reviewer, devices, suites)
            raise Rollback
    except Rollback:
        pass
    return list(zip(data, suites, strict=True))


# --------------------------------------------------------------------------- bytes


@pytest.fixture
def large_suite(suite):
    """The demo's Atlas scenarios and 300 more: copies of its first, each named apart."""
    from scenarios.models import Scenario

    first = Scenario.objects.filter(decision_type=suite).order_by("position", "name").first()
    copies = []
    for number in range(300):
        copy = Scenario.objects.get(pk=first.pk)
        copy.pk, copy.name, copy.position = None, f"copy {number:03d}", 1000 + number
        copies.append(copy)
    Scenario.objects.bulk_create(copies)
    return suite


def test_the_demo_types_bundle_stays_small_however_large_its_suite(large_suite, published):
    assert len(published.data) < 100_000
    assert "scenarios" not in published.document
    assert published.document["manifest"]["tests"]["count"] > 300
    assert len(published.test_suite.data) > 5 * len(published.data)
    print(
        f"\n{published.document['manifest']['tests']['count']} scenarios: bundle "
        f"{len(published.data)} bytes, test suite {len(published.test_suite.data)} bytes"
    )


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
    body, _ = review.bundle_parts(
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
    # The scenarios travel in the bundle's test suite, which its signed manifest names.
    assert bundle.scenarios == ()
    suite = verify_suite(published.test_suite.data, bundle)
    assert bundle.manifest.tests is not None
    assert bundle.manifest.tests.count == len(suite.scenarios)
    names = {s.name for s in suite.scenarios}
    assert "Atlas: Maya's annual review" in names
    revoked = next(s for s in suite.scenarios if s.name == "Atlas: through a revoked delegation")
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
    for scenario in json.loads(published.test_suite.data)["scenarios"]:
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


def test_a_bundle_imports_with_its_test_suite_and_exports_both_unchanged(
    exported_with_suites, tmp_path
):
    for number, (data, suite) in enumerate(exported_with_suites, start=1):
        (tmp_path / f"in-{number}.json").write_bytes(data)
        (tmp_path / f"in-{number}.tests.json").write_bytes(suite)
        call_command("import_bundle", str(tmp_path / f"in-{number}.json"), "--tests",
                     str(tmp_path / f"in-{number}.tests.json"), stdout=io.StringIO())  # fmt: skip
        call_command("export_bundle", "refund.eligibility", "--version", str(number), "-o",
                     str(tmp_path / "out.json"), "--tests", str(tmp_path / "out.tests.json"),
                     stderr=io.StringIO())  # fmt: skip
        assert (tmp_path / "out.json").read_bytes() == data
        assert (tmp_path / "out.tests.json").read_bytes() == suite


def test_a_tampered_or_another_versions_suite_is_refused_with_nothing_written(
    exported_with_suites, tmp_path
):
    (first, first_suite), (_, second_suite) = exported_with_suites
    (tmp_path / "b.json").write_bytes(first)
    before = counts()
    for suite in (first_suite.replace(b'"name":"', b'"name":"x', 1), second_suite):
        assert suite != first_suite
        (tmp_path / "t.json").write_bytes(suite)
        with pytest.raises(CommandError, match="Refused, nothing imported: the test suite was"):
            call_command("import_bundle", str(tmp_path / "b.json"), "--tests",
                         str(tmp_path / "t.json"))  # fmt: skip
        assert counts() == before
    # Without its suite the bundle imports (a service needs no suite); the suite comes later.
    call_command("import_bundle", str(tmp_path / "b.json"), stdout=io.StringIO())
    version = ContractVersion.objects.get(decision_type__key="refund.eligibility", number=1)
    with pytest.raises(ValidationError):
        review.suite_bytes(version)
    (tmp_path / "t.json").write_bytes(first_suite)
    call_command("import_bundle", str(tmp_path / "b.json"), "--tests", str(tmp_path / "t.json"),
                 stdout=io.StringIO())  # fmt: skip
    assert review.suite_bytes(version) == first_suite


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
