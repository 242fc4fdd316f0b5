"""Signed approval and publication statements (compiler_trust._statements) and bundles assembled
from them (`assemble_bundle`): what `verify-bundle` refuses, each with its reason."""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt
import io
import json

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from compiler import canonical_bytes, sha256_hex
from compiler_tools import _cli as cli
from compiler_trust import (
    APPROVER_IS_PUBLISHER,
    FORMAT,
    KEY_ROLES,
    STATEMENT_OTHER_CONTRACT,
    TOO_FEW_APPROVALS,
    ApprovalStatement,
    BundleInvalid,
    Problem,
    PublicationStatement,
    StatementInvalid,
    TrustedKey,
    assemble_bundle,
    bundle_body_hash,
    key_id,
    key_set_json,
    load_private_key_file,
    normalise_body,
    parse_signed_statement,
    private_key_pem,
    public_key_pem,
    serialize_bundle,
    sign_as,
    sign_bundle,
    sign_statement,
    statement_bytes,
    verify_bundle,
    verify_statement,
    write_key_files,
)


def _key(seed: int) -> Ed25519PrivateKey:
    return Ed25519PrivateKey.from_private_bytes(bytes([seed]) * 32)


OLGA, BOB, CAROL, MALLORY = _key(11), _key(12), _key(13), _key(14)
WHEN = "2026-09-01T10:00:00+00:00"
REPORT = "cd" * 32
CONTRACT = {
    "decision_type": "d.t",
    "version": "2",
    "purposes": ["p"],
    "propositions": [{"key": "lim", "accepted_classes": ["fac"]}],
}


def trusted(person, key, *roles, origin="cli", revoked_at=None):
    """A trusted key allowed its roles for the contract's type `d.t`."""
    scope = {f"{role}_types": frozenset({"d.t"} if role in roles else ()) for role in KEY_ROLES}
    return {
        key_id(key): TrustedKey(
            key.public_key(), person, frozenset(roles), origin, revoked_at, **scope
        )
    }


KEYS = (
    trusted("olga", OLGA, "publish")
    | trusted("bob", BOB, "approve")
    | trusted("carol", CAROL, "approve")
)


def body(approvers=("bob", "carol"), publisher=("olga", OLGA)) -> dict:
    keys = {"bob": BOB, "carol": CAROL, "olga": OLGA, "mallory": MALLORY}
    return normalise_body(
        {
            "format": FORMAT,
            "manifest": {
                "decision_type": "d.t",
                "version": "2",
                "parent_sha256": None,
                "author": "ed",
                "publisher": {"person": publisher[0], "key_id": key_id(publisher[1])},
                "editors": [{"person": "ed", "key_id": None}],
                "approvers": [{"person": p, "key_id": key_id(keys[p])} for p in approvers],
                "published_at": WHEN,
                "compiler_version": "0.1.0",
                "report_sha256": REPORT,
            },
            "contract": CONTRACT,
            "source_classes": [{"key": "fac", "label": "Facility", "authority_tier": 1}],
        }
    )


def approval(person, key, *, contract_sha256=None, signed_at=WHEN, signer_key=None):
    statement = ApprovalStatement(
        decision_type="d.t",
        version="2",
        contract_sha256=contract_sha256 or sha256_hex(body()["contract"]),
        report_sha256=REPORT,
        signer=person,
        key_id=key_id(key),
        signed_at=signed_at,
    )
    return sign_statement(statement, key)


def publication(the_body, person="olga", key=OLGA):
    statement = PublicationStatement(
        decision_type="d.t",
        version="2",
        contract_sha256=sha256_hex(the_body["contract"]),
        bundle_sha256=bundle_body_hash(the_body),
        signer=person,
        key_id=key_id(key),
        signed_at=WHEN,
    )
    return sign_statement(statement, key)


def assembled(approvers=("bob", "carol")) -> dict:
    the_body = body(approvers)
    people = {"bob": BOB, "carol": CAROL}
    return assemble_bundle(
        the_body, publication(the_body), [approval(p, people[p]) for p in approvers]
    )


def refusal(document, keys=KEYS, **kwargs) -> BundleInvalid:
    with pytest.raises(BundleInvalid) as caught:
        verify_bundle(document, keys, **kwargs)
    return caught.value


# --------------------------------------------------------------------------- statements


def test_a_statement_signs_its_canonical_bytes_and_verifies_with_its_key():
    signed = approval("bob", BOB)
    assert statement_bytes(signed.statement) == canonical_bytes(
        json.loads(json.dumps(signed.to_json()["statement"]))
    )
    verify_statement(signed, BOB.public_key())
    assert "=" not in signed.signature and len(signed.signature) == 86  # unpadded base64url
    with pytest.raises(StatementInvalid, match="names key"):
        verify_statement(signed, CAROL.public_key())


def test_a_statement_changed_after_signing_no_longer_verifies():
    signed = approval("bob", BOB).to_json()
    signed["statement"]["report_sha256"] = "ee" * 32
    with pytest.raises(StatementInvalid, match="bad signature"):
        verify_statement(parse_signed_statement(signed), BOB.public_key())


def test_a_signed_statement_with_a_bad_field_names_the_field():
    signed = approval("bob", BOB).to_json()
    signed["statement"]["signed_at"] = "2026-09-01T10:00:00"
    with pytest.raises(StatementInvalid, match="statement.approval.signed_at.*UTC offset"):
        parse_signed_statement(json.dumps(signed))


def test_sign_as_names_the_key_and_the_signers_date():
    rendered = approval("bob", CAROL).to_json()["statement"]  # the server's guess of the key
    moment = dt.datetime(2026, 9, 2, 8, 30, 15, 999, tzinfo=dt.UTC)
    signed = sign_as(rendered, BOB, signed_at=moment)
    assert signed.statement.key_id == key_id(BOB)
    assert signed.statement.signed_at == "2026-09-02T08:30:15+00:00"
    verify_statement(signed, BOB.public_key())


# --------------------------------------------------------------------------- bundles


def test_a_bundle_assembled_from_statements_verifies_without_warnings():
    verified = verify_bundle(serialize_bundle(assembled()), KEYS, require_approvals=2)
    assert verified.warnings == ()
    assert [s.statement.kind for s in verified.signatures] == [
        "publication",
        "approval",
        "approval",
    ]


def test_a_statement_resigned_by_an_unregistered_key_is_refused():
    document = assembled()
    forged = approval("bob", MALLORY).to_json()
    entry = document["signatures"][1]
    entry.update(statement=forged["statement"], signature=forged["signature"])
    entry["key_id"] = key_id(MALLORY)
    error = refusal(document)
    assert error.problem is Problem.UNKNOWN_KEY
    assert "not among the 3 trusted public key(s)" in error.reason


def test_a_statement_for_another_contract_hash_is_refused():
    the_body = body()
    other = "ab" * 32
    signed = approval("bob", BOB, contract_sha256=other)
    bundle = copy.deepcopy(assembled())
    bundle["signatures"][1].update(
        statement=signed.to_json()["statement"], signature=signed.signature
    )
    error = refusal(bundle)
    assert error.problem is Problem.STATEMENT
    assert error.reason == STATEMENT_OTHER_CONTRACT.format(
        index=1,
        signer="bob",
        role="approver",
        signed=other,
        actual=sha256_hex(the_body["contract"]),
    )


def test_a_publisher_approving_their_own_version_is_refused():
    the_body = body(approvers=("olga",))
    with pytest.raises(BundleInvalid) as caught:
        assemble_bundle(the_body, publication(the_body), [approval("olga", OLGA)])
    assert caught.value.reason == APPROVER_IS_PUBLISHER.format(person="olga")
    # Hand-assembled past `assemble_bundle`, the verifier refuses it just the same.
    document = {
        **the_body,
        "sha256": bundle_body_hash(the_body),
        "signatures": [
            _entry("publisher", publication(the_body)),
            _entry("approver", approval("olga", OLGA)),
        ],
    }
    error = refusal(document, KEYS | trusted("olga", OLGA, "publish", "approve"))
    assert error.problem is Problem.FOUR_EYES


def _entry(role, signed):
    statement = signed.statement
    return {
        "signer": statement.signer,
        "role": role,
        "key_id": statement.key_id,
        "algorithm": "ed25519",
        "statement": statement.model_dump(mode="json"),
        "signature": signed.signature,
    }


def test_a_revoked_keys_new_signature_is_refused_and_its_earlier_one_stays_valid():
    revoked = KEYS | trusted("carol", CAROL, "approve", revoked_at="2026-08-31T00:00:00+00:00")
    error = refusal(assembled(), revoked)
    assert error.problem is Problem.REVOKED
    assert "'carol' (approver" in error.reason and "2026-08-31T00:00:00+00:00" in error.reason
    later = KEYS | trusted("carol", CAROL, "approve", revoked_at="2026-09-05T00:00:00+00:00")
    assert verify_bundle(assembled(), later).manifest.approver_names == ("bob", "carol")


def test_a_bundle_with_one_approval_removed_fails_a_two_approval_policy():
    one = assembled(approvers=("bob",))
    assert verify_bundle(one, KEYS).manifest.approver_names == ("bob",)
    error = refusal(one, require_approvals=2)
    assert error.problem is Problem.POLICY
    assert error.reason == TOO_FEW_APPROVALS.format(count=1, required=2)
    # Dropping a signature from a two-approval bundle breaks the signed manifest instead.
    two = assembled()
    del two["signatures"][2]
    assert refusal(two, require_approvals=2).problem is Problem.SIGNATURES


def test_a_publication_statement_for_another_body_is_refused():
    document = assembled()
    stale = publication(body(approvers=("bob",)))
    document["signatures"][0].update(
        statement=stale.to_json()["statement"], signature=stale.signature
    )
    error = refusal(document)
    assert error.problem is Problem.STATEMENT
    assert "statement for another bundle" in error.reason


def test_legacy_signatures_verify_with_a_warning_naming_them():
    legacy = {kid: dataclasses.replace(k, origin="legacy") for kid, k in KEYS.items()}
    old = sign_bundle(
        {**body(), "manifest": {**body()["manifest"], "report_sha256": None}},
        [("olga", "publisher", OLGA), ("bob", "approver", BOB), ("carol", "approver", CAROL)],
    )
    verified = verify_bundle(serialize_bundle(old), legacy)
    assert len(verified.warnings) == 3
    assert verified.warnings[1].startswith("legacy signature: signatures[1] by 'bob'")
    # The same statement-less signatures by keys that are not legacy are refused.
    error = refusal(old, KEYS)
    assert error.problem is Problem.STATEMENT and "carries no signed statement" in error.reason


# --------------------------------------------------------------------------- the CLI


def test_keygen_sign_approval_and_verify_bundle_from_the_command_line(tmp_path):
    out = io.StringIO()
    assert cli.main(["keygen", "bob", "--out", str(tmp_path / "keys")], stdout=out) == 0
    private_file = tmp_path / "keys" / "bob.key"
    assert oct(private_file.stat().st_mode & 0o777) == "0o600"
    bob = load_private_key_file(private_file)
    assert f"key {key_id(bob)}" in out.getvalue()
    assert cli.main(["keygen", "bob", "--out", str(tmp_path / "keys")], stderr=io.StringIO()) == 2

    rendered = approval("bob", BOB).to_json()["statement"]
    (tmp_path / "statement.json").write_text(json.dumps(rendered))
    signed_file = tmp_path / "signed.json"
    code = cli.main(
        ["sign-approval", str(tmp_path / "statement.json"), "--key", str(private_file),
         "--out", str(signed_file)]
    )  # fmt: skip
    assert code == 0
    signed = parse_signed_statement(signed_file.read_bytes())
    verify_statement(signed, bob.public_key())

    the_body = body(approvers=("carol",))
    (tmp_path / "bundle.json").write_bytes(
        serialize_bundle(
            assemble_bundle(the_body, publication(the_body), [approval("carol", CAROL)])
        )
    )
    entries = [
        {
            "person": p,
            "roles": [r],
            f"{r}_types": ["d.t"],
            "origin": "cli",
            "public_key": public_key_pem(k),
        }
        for p, r, k in (("olga", "publish", OLGA), ("carol", "approve", CAROL))
    ]
    (tmp_path / "keys.json").write_bytes(key_set_json(entries))
    args = ["verify-bundle", str(tmp_path / "bundle.json"),
            "--public-key", str(tmp_path / "keys.json")]  # fmt: skip
    out, err = io.StringIO(), io.StringIO()
    assert cli.main(args, stdout=out, stderr=err) == 0, err.getvalue()
    assert "approved by 'carol'" in out.getvalue() and err.getvalue() == ""
    out, err = io.StringIO(), io.StringIO()
    assert cli.main([*args, "--require-approvals", "2"], stdout=out, stderr=err) == 1
    assert TOO_FEW_APPROVALS.format(count=1, required=2) in err.getvalue()


def test_write_key_files_never_overwrites(tmp_path):
    private_path, _ = write_key_files(tmp_path, "olga")
    before = private_path.read_bytes()
    with pytest.raises(ValueError, match="already exists"):
        write_key_files(tmp_path, "olga")
    assert private_path.read_bytes() == before
    assert b"PRIVATE KEY" in before and private_key_pem(load_private_key_file(private_path))
