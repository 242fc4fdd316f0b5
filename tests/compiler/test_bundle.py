"""Signed contract bundles (compiler_trust._bundle, compiler_trust._keys): format, hash, signatures,
tamper detection down to single bytes, and compiling against a verified bundle."""

from __future__ import annotations

import copy
import hashlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import CompileInput, InvalidInput, canonical_bytes, compile_input, load_input
from compiler_trust import (
    FORMAT,
    FORMAT_2,
    KEY_ROLES,
    KEY_SET_FILE,
    READ_FORMATS,
    BundleInvalid,
    KeyLoadError,
    Problem,
    TrustedKey,
    VerifiedBundle,
    bundle_body,
    bundle_body_hash,
    compile_input_from_bundle,
    generate_key_pair,
    inspect_bundle,
    key_id,
    key_set_json,
    load_private_key,
    load_public_key,
    load_public_keys,
    parse_key_set,
    private_key_pem,
    public_key_pem,
    scenario_input,
    serialize_bundle,
    sign_bundle,
    verify_bundle,
)
from compiler_trust._bundle import reasons as bundles

ROOT = Path(__file__).resolve().parents[2]


def _key(seed: int) -> Ed25519PrivateKey:
    # Fixed seeds: fast, deterministic keys for tests (never how real keys are made).
    return Ed25519PrivateKey.from_private_bytes(bytes([seed]) * 32)


OLGA, BOB, CAROL, MALLORY = _key(1), _key(2), _key(3), _key(4)


BUNDLE_TYPES = ("d.t", "credit.review.continuation")
"""The decision types of this file's bundles: the small one's and the Atlas example's."""


def trusted(
    person: str, key: Ed25519PrivateKey, *roles: str, types: tuple[str, ...] = BUNDLE_TYPES
) -> dict[str, TrustedKey]:
    """A trusted key allowed its roles for `types` (every bundle type here by default)."""
    scope = {f"{role}_types": frozenset(types if role in roles else ()) for role in KEY_ROLES}
    return {key_id(key): TrustedKey(key.public_key(), person, frozenset(roles), **scope)}


# The key set a workbench exports: olga publishes, bob and carol approve.
TRUSTED = (
    trusted("olga", OLGA, "publish")
    | trusted("bob", BOB, "approve")
    | trusted("carol", CAROL, "approve")
)
SIGNERS = [("olga", "publisher", OLGA), ("bob", "approver", BOB), ("carol", "approver", CAROL)]


def small_body() -> dict:
    """A deliberately small bundle, so that every byte of it can be flipped quickly. The tiny
    relevance is written `1e-7` in canonical JSON: a flip to `1E-7` parses to the same value."""
    return {
        "format": FORMAT_2,  # carries its scenarios: format 2 is still signed and verified
        "manifest": {
            "decision_type": "d.t",
            "version": "2",
            "parent_sha256": "ab" * 32,
            "author": "olga",
            "editors": [{"person": "olga", "key_id": key_id(OLGA)}],
            "approvers": [{"person": "bob"}, {"person": "carol"}],
            "published_at": "2026-09-01T10:00:00+00:00",
            "compiler_version": "0.1.0",
        },
        "contract": {
            "decision_type": "d.t",
            "version": "2",
            "purposes": ["p"],
            "propositions": [{"key": "lim", "accepted_classes": ["fac"]}],
        },
        "source_classes": [{"key": "fac", "label": "Facility", "authority_tier": 1}],
        "scenarios": [
            {
                "name": "s",
                "request": {
                    "decision_type": "d.t",
                    "principal": "m",
                    "roles": ["r"],
                    "purpose": "p",
                    "entity": "E",
                    "decision_date": "2026-08-30",
                    "token_budget": 50,
                },
                "corpus": {
                    "candidates": [
                        {
                            "id": "f",
                            "entity": "E",
                            "allowed_roles": ["r"],
                            "allowed_purposes": ["p"],
                            "evidence_class": "fac",
                            "supports": ["lim"],
                            "valid_from": "2025-01-01",
                            "tokens": 9,
                            "relevance": 1e-7,
                            "content": "x",
                        }
                    ]
                },
                "expected": {"slots": {"lim": "supported"}},
            }
        ],
    }


@pytest.fixture(scope="module")
def signed() -> dict:
    return sign_bundle(small_body(), SIGNERS)


@pytest.fixture(scope="module")
def data(signed: dict) -> bytes:
    return serialize_bundle(signed)


def problem_of(document, keys=TRUSTED, **kwargs) -> BundleInvalid:
    with pytest.raises(BundleInvalid) as caught:
        verify_bundle(document, keys, **kwargs)
    return caught.value


def resign(document: dict) -> dict:
    """The document with its sha256 recomputed, signatures untouched."""
    return {**document, "sha256": bundle_body_hash(document)}


# --------------------------------------------------------------------------- round trip


def test_sign_serialize_verify_round_trip(signed: dict, data: bytes):
    verified = verify_bundle(data, TRUSTED)
    assert isinstance(verified, VerifiedBundle)
    assert verified.sha256 == signed["sha256"] == bundle_body_hash(signed)
    assert verified.document == json.loads(data)
    assert serialize_bundle(verified) == data
    assert verified.manifest.publisher.person == "olga"
    assert verified.manifest.approver_names == ("bob", "carol")
    assert [a.key_id for a in verified.manifest.approvers] == [key_id(BOB), key_id(CAROL)]
    assert [(s.signer, s.role, s.key_id) for s in verified.signatures] == [
        ("olga", "publisher", key_id(OLGA)),
        ("bob", "approver", key_id(BOB)),
        ("carol", "approver", key_id(CAROL)),
    ]
    assert verified.contract.propositions[0].key == "lim"
    # The parsed document verifies too, and gives the same result.
    assert verify_bundle(json.loads(data), TRUSTED).bundle == verified.bundle
    assert verify_bundle(data.decode(), TRUSTED).bundle == verified.bundle


def test_file_form_is_canonical_json_plus_newline(signed: dict, data: bytes):
    assert data == canonical_bytes(signed) + b"\n"
    assert data.count(b"\n") == 1
    assert signed["sha256"] == hashlib.sha256(canonical_bytes(bundle_body(signed))).hexdigest()


def test_signature_is_ed25519_over_the_ascii_hex_digest(signed: dict):
    import base64

    for entry in signed["signatures"]:
        key = TRUSTED[entry["key_id"]].public_key
        key.verify(base64.b64decode(entry["signature"]), signed["sha256"].encode("ascii"))
        assert entry["algorithm"] == "ed25519"


def test_hash_of_body_and_of_whole_bundle_agree(signed: dict):
    assert bundle_body_hash(signed) == bundle_body_hash(bundle_body(signed)) == signed["sha256"]


def test_exporting_twice_gives_identical_bytes(signed: dict, data: bytes):
    assert serialize_bundle(signed) == data
    assert serialize_bundle(sign_bundle(small_body(), SIGNERS)) == data
    # Order of approvers, catalogue, scenarios and signers does not matter.
    body = small_body()
    body["manifest"]["approvers"].reverse()
    body["source_classes"].append({"key": "aaa", "label": "A", "authority_tier": 2})
    body["scenarios"].insert(0, {**copy.deepcopy(body["scenarios"][0]), "name": "t"})
    once = serialize_bundle(sign_bundle(body, SIGNERS))
    body2 = copy.deepcopy(body)
    body2["source_classes"].reverse()
    body2["scenarios"].reverse()
    twice = serialize_bundle(sign_bundle(body2, list(reversed(SIGNERS))))
    assert once == twice


def test_signing_writes_every_default_out(signed: dict):
    assert signed["manifest"]["publisher"] == {"person": "olga", "key_id": key_id(OLGA)}
    assert signed["contract"]["policy"]["name"] == "default"
    assert signed["contract"]["propositions"][0]["max_items"] == 1
    assert signed["source_classes"][0] == {
        "key": "fac",
        "label": "Facility",
        "description": "",
        "authority_tier": 1,
        "weak": False,
    }
    assert signed["scenarios"][0]["expected"] == {
        "slots": {"lim": "supported"},
        "admitted": None,
        "rejected": None,
    }
    assert signed["scenarios"][0]["corpus"]["directory"] == {}


def test_private_keys_may_be_given_as_pem():
    pem = [(n, r, private_key_pem(k)) for n, r, k in SIGNERS]
    assert sign_bundle(small_body(), pem) == sign_bundle(small_body(), SIGNERS)


# --------------------------------------------------------------------------- single bytes


def _strict_json(raw: bytes):
    """What the test counts as parseable: UTF-8 I-JSON (unique keys, no NaN)."""

    def unique(pairs):
        keys = [k for k, _ in pairs]
        if len(set(keys)) != len(keys):
            raise ValueError("duplicate key")
        return dict(pairs)

    def no_constant(name):
        raise ValueError(name)

    try:
        return True, json.loads(
            raw.decode("utf-8"), object_pairs_hook=unique, parse_constant=no_constant
        )
    except ValueError:
        return False, None


SIGNATURE_PROBLEMS = {
    Problem.WRONG_SIGNER,
    Problem.UNKNOWN_KEY,
    Problem.BAD_SIGNATURE,
    Problem.SIGNATURES,
    Problem.SCHEMA,
}


FLIPS = (0x01, 0x20)
"""Per byte: the lowest bit (a digit or letter becomes its neighbour, `"` becomes `#`...) and
the case bit (`e` becomes `E`, which JSON numbers cannot tell apart). Arbitrary replacements,
insertions and deletions are left to the hypothesis test below."""


def test_flipping_any_byte_fails_verification(data: bytes):
    original = json.loads(data)
    seen: dict[Problem, int] = {}
    for position in range(len(data)):
        for mask in FLIPS:
            mutated = bytearray(data)
            mutated[position] ^= mask
            mutated = bytes(mutated)
            error = problem_of(mutated)
            seen[error.problem] = seen.get(error.problem, 0) + 1
            where = f"byte {position} ^{mask:#x}: {data[max(0, position - 20) : position + 20]!r}"
            parses, parsed = _strict_json(mutated)
            if not parses:
                assert error.problem is Problem.MALFORMED, where
                continue
            assert error.problem is not Problem.MALFORMED, where
            if not isinstance(parsed, dict) or parsed.keys() != original.keys():
                continue  # a top-level member renamed: a format or schema problem
            if parsed == original:
                assert error.problem is Problem.NOT_CANONICAL, where
            elif parsed["format"] != original["format"] and parsed["format"] not in READ_FORMATS:
                assert error.problem is Problem.FORMAT, where
            elif bundle_body(parsed) != bundle_body(original) or (
                parsed["sha256"] != original["sha256"]
            ):
                assert error.problem is Problem.ALTERED, where
                assert error.reason.startswith("the bundle was altered: sha256 "), where
            else:
                assert parsed["signatures"] != original["signatures"]
                assert error.problem in SIGNATURE_PROBLEMS, where
    # Every kind of failure was exercised by the sweep.
    for kind in (
        Problem.MALFORMED,
        Problem.ALTERED,
        Problem.NOT_CANONICAL,
        Problem.FORMAT,
        Problem.UNKNOWN_KEY,
        Problem.BAD_SIGNATURE,
        Problem.WRONG_SIGNER,
        Problem.SCHEMA,
    ):
        assert seen.get(kind), (kind, seen)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.data())
def test_replacing_inserting_or_deleting_any_byte_fails_verification(data: bytes, draw):
    position = draw.draw(st.integers(0, len(data) - 1), label="position")
    action = draw.draw(st.sampled_from(["replace", "insert", "delete"]), label="action")
    byte = draw.draw(st.integers(0, 255), label="byte")
    if action == "replace":
        if byte == data[position]:
            byte ^= 0xFF
        mutated = data[:position] + bytes([byte]) + data[position + 1 :]
    elif action == "insert":
        mutated = data[:position] + bytes([byte]) + data[position:]
    else:
        mutated = data[:position] + data[position + 1 :]
    with pytest.raises(BundleInvalid):
        verify_bundle(mutated, TRUSTED)


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda d: d[:-1], Problem.NOT_CANONICAL),  # no trailing newline
        (lambda d: d[:-1] + b"\r\n", Problem.NOT_CANONICAL),
        (lambda d: d[:-1] + b" ", Problem.NOT_CANONICAL),
        (lambda d: b" " + d, Problem.NOT_CANONICAL),
        (lambda d: d.replace(b"1e-7", b"1E-7"), Problem.NOT_CANONICAL),
        (lambda d: d.replace(b"1e-7", b"0.0000001"), Problem.NOT_CANONICAL),
        (lambda d: d.replace(b'"x"', b'"\\u0078"'), Problem.NOT_CANONICAL),
        (lambda d: json.dumps(json.loads(d), indent=2).encode(), Problem.NOT_CANONICAL),
        (lambda d: d[:100], Problem.MALFORMED),
        (lambda d: b"\xef\xbb\xbf" + d, Problem.MALFORMED),  # BOM
        (lambda d: d.replace(b'"x"', b'"\xff"'), Problem.MALFORMED),
        (lambda d: d.replace(b"1e-7", b"NaN"), Problem.MALFORMED),
        (lambda d: d.replace(b"1e-7", b"1e999"), Problem.MALFORMED),
        (lambda d: d.replace(b'"content":"x"', b'"content":"x","content":"x"'), Problem.MALFORMED),
        (lambda d: d.replace(b'"content":"x"', b'"content":"y"'), Problem.ALTERED),
        (lambda d: b"[" * 100_000, Problem.MALFORMED),
        (lambda d: b"[" + b"1" * 5000 + b"]", Problem.MALFORMED),
        (lambda d: b"[]\n", Problem.FORMAT),
        (lambda d: d.replace(FORMAT_2.encode(), b"evidence-workbench.bundle/4"), Problem.FORMAT),
        # Format 3 is read too, so naming it changes the hashed content.
        (lambda d: d.replace(FORMAT_2.encode(), FORMAT.encode()), Problem.ALTERED),
    ],
)
def test_named_byte_changes(data: bytes, change, problem):
    assert problem_of(change(data)).problem is problem


def test_reasons_are_specific(data: bytes, signed: dict):
    assert "Unterminated string starting at (line 1, column 99)" in problem_of(data[:100]).reason
    assert (
        'the key "content" appears twice'
        in problem_of(data.replace(b'"content":"x"', b'"content":"x","content":"x"')).reason
    )
    altered = problem_of(data.replace(b'"content":"x"', b'"content":"y"')).reason
    assert altered.startswith(f"the bundle was altered: sha256 {signed['sha256']} does not match")
    assert "not the canonical form" in problem_of(data[:-1]).reason
    assert (
        'unsupported bundle: it declares format "evidence-workbench.bundle/4"; this compiler '
        "reads 'evidence-workbench.bundle/2', 'evidence-workbench.bundle/3'"
        in problem_of(data.replace(FORMAT_2.encode(), b"evidence-workbench.bundle/4")).reason
    )


# --------------------------------------------------------------------------- keys and signers


def test_a_signature_by_an_unknown_key_is_refused(data: bytes):
    keys = {k: v for k, v in TRUSTED.items() if k != key_id(CAROL)}
    error = problem_of(data, keys)
    assert error.problem is Problem.UNKNOWN_KEY
    assert "'carol' (approver, key " + key_id(CAROL) in error.reason
    assert problem_of(data, {}).problem is Problem.UNKNOWN_KEY


def test_signing_with_an_untrusted_key_is_refused():
    bundle = sign_bundle(small_body(), [SIGNERS[0], SIGNERS[1], ("carol", "approver", MALLORY)])
    error = problem_of(serialize_bundle(bundle))
    assert error.problem is Problem.UNKNOWN_KEY
    assert key_id(MALLORY) in error.reason


def test_a_signature_by_the_wrong_key_is_refused(signed: dict):
    import base64

    forged = copy.deepcopy(signed)
    carol = next(s for s in forged["signatures"] if s["signer"] == "carol")
    # Mallory signs the right hash, but claims carol's key id.
    carol["signature"] = base64.b64encode(MALLORY.sign(signed["sha256"].encode())).decode()
    error = problem_of(serialize_bundle(forged))
    assert error.problem is Problem.BAD_SIGNATURE
    assert error.reason.startswith(f"bad signature by 'carol' (approver, key {key_id(CAROL)})")


def test_a_signature_over_another_bundle_is_refused(signed: dict):
    other = sign_bundle({**small_body(), "scenarios": []}, SIGNERS)
    spliced = copy.deepcopy(signed)
    spliced["signatures"][1] = other["signatures"][1]
    assert problem_of(spliced).problem is Problem.BAD_SIGNATURE


def test_key_owners_bind_signers_to_their_keys():
    # Carol's signature slot is filled with bob's second key: valid crypto, wrong person.
    bundle = sign_bundle(
        small_body(),
        [SIGNERS[0], ("bob", "approver", BOB), ("carol", "approver", _key(9))],
    )
    ownerless = {
        key_id(_key(9)): TrustedKey(
            _key(9).public_key(), None, frozenset({"approve"}), approve_types=frozenset({"d.t"})
        )
    }
    verify_bundle(bundle, {**TRUSTED, **ownerless})  # a key without an owner cannot tell
    keys = {**TRUSTED, **trusted("bob", _key(9), "approve")}
    owners = {k: v.person for k, v in TRUSTED.items()}
    for error in (
        problem_of(bundle, keys),
        problem_of(bundle, {**TRUSTED, **ownerless}, key_owners={**owners, key_id(_key(9)): "bob"}),
    ):
        assert error.problem is Problem.WRONG_SIGNER
        assert "claims to be by 'carol', but key" in error.reason
        assert "belongs to 'bob'" in error.reason
    verify_bundle(bundle, keys, key_owners={**owners, key_id(_key(9)): "carol"})


def test_bare_public_keys_are_trusted_to_sign_nothing(data: bytes):
    """A PEM or key object says nothing about who may publish or approve: the key set does."""
    for bare in (
        {k: public_key_pem(v.public_key) for k, v in TRUSTED.items()},
        {k: v.public_key for k, v in TRUSTED.items()},
    ):
        error = problem_of(data, bare)
        assert error.problem is Problem.NOT_ALLOWED
        assert error.reason == bundles.KEY_MAY_NOT_SIGN.format(
            index=0, signer="olga", role="publisher", key_id=key_id(OLGA), action="publish",
            roles="none",
        )  # fmt: skip


@pytest.mark.parametrize(
    ("signers", "message"),
    [
        ([("bob", "approver", BOB), ("carol", "approver", CAROL)], "no publisher signature"),
        (
            [*SIGNERS, ("dave", "publisher", _key(5))],
            "2 publisher signatures ('dave', 'olga')",
        ),
        (
            [("olga", "publisher", OLGA), ("bob", "approver", BOB)],
            "approver 'carol' is listed in the manifest without a matching approver signature",
        ),
        (
            [*SIGNERS, ("dave", "approver", _key(5))],
            "an approver signature by 'dave', who is not among the manifest's approvers",
        ),
        ([*SIGNERS, ("bob", "approver", BOB)], "'bob' signed as approver 2 times"),
    ],
)
def test_the_signatures_must_match_the_manifest(signed: dict, signers, message):
    body = small_body()
    body["manifest"]["publisher"] = {"person": "olga"}
    with pytest.raises(BundleInvalid) as at_signing:
        sign_bundle(body, signers)
    assert message in at_signing.value.reason
    # And a hand-made bundle with the same signatures is refused on verification.
    forged = copy.deepcopy(signed)
    forged["signatures"] = [_entry(signed["sha256"], *s) for s in signers]
    keys = {**TRUSTED, key_id(_key(5)): _key(5).public_key()}
    error = problem_of(forged, keys)
    assert error.problem is Problem.SIGNATURES
    assert message in error.reason


def _entry(digest: str, signer: str, role: str, key: Ed25519PrivateKey) -> dict:
    import base64

    return {
        "signer": signer,
        "role": role,
        "key_id": key_id(key),
        "algorithm": "ed25519",
        "signature": base64.b64encode(key.sign(digest.encode())).decode(),
    }


def test_the_publisher_signature_must_be_by_the_manifest_publisher(signed: dict):
    forged = copy.deepcopy(signed)
    forged["signatures"][0]["signer"] = "bob"
    assert problem_of(forged).problem is Problem.WRONG_SIGNER  # olga's key, by the key set
    with pytest.raises(BundleInvalid) as caught:
        inspect_bundle(forged)  # and, without keys, by the manifest
    assert "the publisher signature is by 'bob', but the manifest names 'olga'" in (
        caught.value.reason
    )
    body = small_body()
    body["manifest"]["publisher"] = {"person": "zed"}
    with pytest.raises(BundleInvalid, match="publisher signature is by 'olga'"):
        sign_bundle(body, SIGNERS)


def test_each_signature_is_made_with_the_key_the_manifest_names(signed: dict):
    # Carol signs with a second key of hers that the key set trusts: not the one she is
    # named with in the signed manifest.
    forged = copy.deepcopy(signed)
    forged["signatures"][2] = _entry(signed["sha256"], "carol", "approver", _key(9))
    keys = {**TRUSTED, **trusted("carol", _key(9), "approve")}
    error = problem_of(forged, keys)
    assert error.problem is Problem.SIGNATURES
    assert error.reason == bundles.SIGNED_WITH_ANOTHER_KEY.format(
        role="approver", signer="carol", key_id=key_id(_key(9)), named=key_id(CAROL)
    )


def test_non_canonical_base64_in_a_signature_is_refused(signed: dict):
    forged = copy.deepcopy(signed)
    text = forged["signatures"][0]["signature"]
    # The character before "==" carries 4 unused bits: changing them keeps the decoded bytes.
    last = text[-3]
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    twin = alphabet[alphabet.index(last) ^ 1]
    forged["signatures"][0]["signature"] = text[:-3] + twin + "=="
    error = problem_of(forged)
    assert error.problem is Problem.SCHEMA
    assert "signatures[0].signature" in error.reason
    assert "not canonical base64" in error.reason


# --------------------------------------------------------------------------- schema


def test_schema_errors_list_every_location(signed: dict):
    broken = copy.deepcopy(signed)
    broken["manifest"]["published_at"] = "2026-09-01T10:00:00"
    broken["source_classes"][0]["weak"] = "maybe"
    broken["contract"]["propositions"][0]["max_items"] = 0
    broken["extra"] = 1
    error = problem_of(resign(broken))
    assert error.problem is Problem.SCHEMA
    locations = {tuple(e["loc"]) for e in error.errors}
    assert ("manifest", "published_at") in locations
    assert ("source_classes", 0, "weak") in locations
    assert ("contract", "propositions", 0, "max_items") in locations
    assert ("extra",) in locations
    assert "manifest.published_at: Value error, '2026-09-01T10:00:00' has no UTC offset" in (
        error.reason
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda b: b["manifest"].update(version="3"), "manifest.version '3' is not the contract's"),
        (
            lambda b: b["manifest"].update(author="zed"),
            "the author 'zed' is not among the editors",
        ),
        (lambda b: b["manifest"].update(approvers=[]), "at least 1 item"),
        (lambda b: b["manifest"].update(editors=[]), "at least 1 item"),
        (
            lambda b: b["manifest"].update(approvers=[{"person": "bob"}, {"person": "bob"}]),
            "approver 'bob' appears more than once",
        ),
        (
            lambda b: b["manifest"].update(approvers=["bob", "carol"]),
            "manifest.approvers[0]: Input should be a valid dictionary",
        ),
        (lambda b: b["manifest"].update(parent_sha256="abc"), "String should match pattern"),
        (
            lambda b: b["contract"]["propositions"][0].update(accepted_classes=["email"]),
            "accepts source class 'email', which is not in the bundle's source_classes",
        ),
        (
            lambda b: b["scenarios"][0]["expected"]["slots"].update(nope="unknown"),
            "scenario 's' expects a state for 'nope', which is not a proposition",
        ),
        (
            lambda b: b["scenarios"][0]["expected"]["slots"].update(lim="fine"),
            "scenarios[0].expected.slots.lim: Input should be 'supported'",
        ),
        (lambda b: b["scenarios"].append(copy.deepcopy(b["scenarios"][0])), "scenario 's' appears"),
    ],
)
def test_inconsistent_bodies_are_refused(change, message):
    body = small_body()
    change(body)
    with pytest.raises(BundleInvalid) as caught:
        sign_bundle(body, SIGNERS)
    assert caught.value.problem is Problem.SCHEMA
    assert message in caught.value.reason or message in json.dumps(caught.value.errors)


def test_scenarios_keep_fields_the_workbench_adds():
    body = small_body()
    body["scenarios"][0]["description"] = "base case"
    body["scenarios"][0]["expected"]["flips"] = []
    signed = sign_bundle(body, SIGNERS)
    verified = verify_bundle(serialize_bundle(signed), TRUSTED)
    assert verified.document["scenarios"][0]["description"] == "base case"
    assert verified.scenarios[0].model_extra == {"description": "base case"}


def test_a_body_that_already_carries_a_hash_is_refused(signed: dict):
    with pytest.raises(BundleInvalid, match="already carries sha256 and signatures"):
        sign_bundle(signed, SIGNERS)


# --------------------------------------------------------------------------- compiling


def _atlas() -> dict:
    return json.loads((ROOT / "examples" / "atlas.json").read_text())


@pytest.fixture(scope="module")
def atlas_bundle() -> VerifiedBundle:
    atlas = _atlas()
    classes = sorted({c for p in atlas["contract"]["propositions"] for c in p["accepted_classes"]})
    body = {
        "format": FORMAT_2,  # carries its scenarios: format 2 is still signed and verified
        "manifest": {
            "decision_type": atlas["contract"]["decision_type"],
            "version": atlas["contract"]["version"],
            "parent_sha256": None,
            "author": "olga",
            "editors": [{"person": "olga"}],
            "approvers": [{"person": "bob"}],
            "published_at": "2026-09-01T10:00:00Z",
            "compiler_version": "0.1.0",
        },
        "contract": atlas["contract"],
        "source_classes": [
            {"key": c, "label": c.replace("_", " "), "authority_tier": 1} for c in classes
        ],
        "scenarios": [
            {
                "name": "atlas",
                "request": atlas["request"],
                "corpus": {"directory": atlas["directory"], "candidates": atlas["candidates"]},
                "expected": {
                    "slots": {
                        "facility_limit": "supported",
                        "review_open": "supported",
                        "waiver_valid": "unknown",
                        "continuation_rule": "supported",
                    }
                },
            }
        ],
    }
    bundle = sign_bundle(body, [("olga", "publisher", OLGA), ("bob", "approver", BOB)])
    return verify_bundle(serialize_bundle(bundle), TRUSTED)


def _json(out) -> bytes:
    return canonical_bytes(out.to_json())


def test_compiling_against_a_bundle_equals_compiling_the_full_input(atlas_bundle):
    atlas = _atlas()
    full = compile_input(load_input(atlas))
    without_contract = {k: v for k, v in atlas.items() if k != "contract"}
    via_bundle = compile_input(compile_input_from_bundle(atlas_bundle, without_contract))
    assert _json(via_bundle) == _json(full)
    assert via_bundle.result == "compiled"
    # The unverified model works the same way.
    again = compile_input(compile_input_from_bundle(atlas_bundle.bundle, without_contract))
    assert _json(again) == _json(full)


def test_an_input_may_repeat_the_bundles_contract(atlas_bundle):
    atlas = _atlas()
    same = compile_input_from_bundle(atlas_bundle, atlas)
    assert isinstance(same, CompileInput)
    # Defaults written out are still the same contract.
    explicit = {**atlas, "contract": atlas_bundle.contract.model_dump(mode="json")}
    assert compile_input_from_bundle(atlas_bundle, explicit) == same


def test_an_input_with_another_contract_is_refused_with_every_other_problem(atlas_bundle):
    atlas = _atlas()
    atlas["contract"]["version"] = "4"
    atlas["candidates"][0]["tokens"] = -1
    with pytest.raises(InvalidInput) as caught:
        compile_input_from_bundle(atlas_bundle, atlas)
    errors = caught.value.errors
    assert errors[0]["loc"] == ["contract"]
    assert "is not the bundle's ('credit.review.continuation' version '3'" in errors[0]["msg"]
    assert ["candidates", 0, "tokens"] in [e["loc"] for e in errors]
    atlas["contract"] = "nonsense"
    with pytest.raises(InvalidInput, match="not the bundle's"):
        compile_input_from_bundle(atlas_bundle, atlas)


def test_an_input_that_is_not_an_object_is_invalid(atlas_bundle):
    with pytest.raises(InvalidInput, match="an array, not an object"):
        compile_input_from_bundle(atlas_bundle, [])


def test_a_bundle_scenario_reproduces_its_expectations(atlas_bundle):
    out = compile_input(scenario_input(atlas_bundle, "atlas"))
    expected = atlas_bundle.scenarios[0].expected.slots
    assert {s.proposition: s.state for s in out.slots} == expected
    with pytest.raises(KeyError, match="no scenario 'nope'"):
        scenario_input(atlas_bundle, "nope")


# --------------------------------------------------------------------------- key files


def test_key_id_is_sha256_of_the_raw_public_key():
    raw = OLGA.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    assert key_id(OLGA) == key_id(OLGA.public_key()) == hashlib.sha256(raw).hexdigest()[:16]


def test_generated_key_pairs_round_trip():
    private_pem, public_pem = generate_key_pair()
    private = load_private_key(private_pem)
    assert key_id(load_public_key(public_pem)) == key_id(private)
    assert public_pem.startswith(b"-----BEGIN PUBLIC KEY-----")
    assert private_pem.startswith(b"-----BEGIN PRIVATE KEY-----")
    locked, _ = generate_key_pair(password=b"secret")
    assert load_private_key(locked, password=b"secret")
    with pytest.raises(KeyLoadError):
        load_private_key(locked)


def test_load_public_keys_from_a_file_or_a_directory(tmp_path: Path, data: bytes):
    (tmp_path / "olga.pem").write_bytes(public_key_pem(OLGA))
    (tmp_path / "bob.pub").write_bytes(
        BOB.public_key().public_bytes(
            serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
        )
        + b" bob@bank\n"
    )
    (tmp_path / "carol-and-olga.pem").write_bytes(public_key_pem(CAROL) + public_key_pem(OLGA))
    (tmp_path / "README.txt").write_text("not a key")
    keys = load_public_keys(tmp_path)
    assert set(keys) == set(TRUSTED)
    assert all(k.person is None and not k.roles for k in keys.values())
    assert problem_of(data, keys).problem is Problem.NOT_ALLOWED  # bare keys may sign nothing
    assert set(load_public_keys(tmp_path / "olga.pem")) == {key_id(OLGA)}
    # With a key set beside them, the directory is read from the key set alone.
    (tmp_path / KEY_SET_FILE).write_bytes(key_set_json(_key_set_entries()))
    assert load_public_keys(tmp_path) == TRUSTED == load_public_keys(tmp_path / KEY_SET_FILE)
    assert verify_bundle(data, load_public_keys(tmp_path))


def _key_set_entries() -> list[dict]:
    return [
        {
            "person": k.person,
            "roles": sorted(k.roles),
            "publish_types": sorted(k.publish_types or ()),
            "approve_types": sorted(k.approve_types or ()),
            "public_key": public_key_pem(k.public_key),
        }
        for k in TRUSTED.values()
    ]


def test_a_key_set_names_each_key_its_person_and_roles():
    document = json.loads(key_set_json(_key_set_entries()))
    assert document["format"] == "evidence-workbench.keys/2"
    assert [
        (e["key_id"], e["person"], e["roles"], e["publish_types"], e["approve_types"])
        for e in document["keys"]
    ] == [
        (key_id(OLGA), "olga", ["publish"], sorted(BUNDLE_TYPES), []),
        (key_id(BOB), "bob", ["approve"], [], sorted(BUNDLE_TYPES)),
        (key_id(CAROL), "carol", ["approve"], [], sorted(BUNDLE_TYPES)),
    ]
    assert parse_key_set(json.dumps(document)) == TRUSTED


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(format="x"), "not a key set: it should declare format"),
        (lambda d: d.update(keys=[]), "the key set has no keys"),
        (lambda d: d["keys"][1].update(roles=["sign"]), "keys[1].roles: a list of publish"),
        (lambda d: d["keys"][0].update(person=""), "keys[0].person: the key's owner is required"),
        (lambda d: d["keys"][2].update(key_id=key_id(BOB)), "keys[2].key_id: '"),
        (lambda d: d["keys"][0].update(trusted=True), "keys[0]: an entry has only"),
    ],
)
def test_a_bad_key_set_is_refused_with_the_entry_named(tmp_path: Path, change, message):
    document = json.loads(key_set_json(_key_set_entries()))
    change(document)
    path = tmp_path / KEY_SET_FILE
    path.write_text(json.dumps(document))
    with pytest.raises(KeyLoadError) as caught:
        load_public_keys(tmp_path)
    assert str(caught.value).startswith(f"{path}: {message}")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (lambda: private_key_pem(OLGA), "this is a private key"),
        (lambda: b"hello", "holds no Ed25519 public key"),
        (
            lambda: b"-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n",
            "unreadable public key",
        ),
    ],
)
def test_bad_key_files_are_named(tmp_path: Path, content, message):
    path = tmp_path / "k.pem"
    path.write_bytes(content())
    with pytest.raises(KeyLoadError, match=message) as caught:
        load_public_keys(tmp_path)
    assert str(path) in str(caught.value)


def test_missing_or_empty_key_locations(tmp_path: Path):
    with pytest.raises(KeyLoadError, match="no \\*.pem or \\*.pub"):
        load_public_keys(tmp_path)
    with pytest.raises(KeyLoadError, match="no such key file"):
        load_public_keys(tmp_path / "missing.pem")


# --------------------------------------------------------------------------- purity


def test_bundles_do_not_import_django():
    code = (
        "import sys, compiler_trust._bundle, compiler_trust._keys; "
        "bad = [m for m in sys.modules if m.split('.')[0] == 'django']; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_a_pretty_copy_verifies_once_parsed(data: bytes):
    pretty = json.dumps(json.loads(data), indent=2).encode()
    assert problem_of(pretty).problem is Problem.NOT_CANONICAL
    verified = verify_bundle(json.loads(pretty), TRUSTED)
    assert serialize_bundle(verified) == data


def test_inspect_checks_integrity_but_no_key(data: bytes, signed: dict):
    bundle = inspect_bundle(data)
    assert bundle.sha256 == signed["sha256"]
    assert problem_of_inspect(data.replace(b'"content":"x"', b'"content":"y"')) is Problem.ALTERED
    assert problem_of_inspect(data[:-1]) is Problem.NOT_CANONICAL
    forged = copy.deepcopy(signed)
    forged["signatures"] = forged["signatures"][:2]
    assert problem_of_inspect(forged) is Problem.SIGNATURES
    # A stranger's signature passes inspection: that is what verify_bundle is for.
    stranger = sign_bundle(small_body(), [SIGNERS[0], SIGNERS[1], ("carol", "approver", MALLORY)])
    assert inspect_bundle(stranger).signatures[2].key_id == key_id(MALLORY)


def problem_of_inspect(document) -> Problem:
    with pytest.raises(BundleInvalid) as caught:
        inspect_bundle(document)
    return caught.value.problem


# --------------------------------------------------------------------------- four eyes


ED = _key(6)


def _four_eyes_body(**manifest) -> dict:
    body = small_body()
    body["manifest"]["editors"].append({"person": "ed", "key_id": key_id(ED)})
    body["manifest"].update(manifest)
    return body


def _forge(body: dict, signers) -> dict:
    """What a forger writes without sign_bundle's checks: each manifest signatory named with
    the key they sign with, the hash, and valid signatures."""
    body = copy.deepcopy(body)
    manifest = body["manifest"]
    manifest["publisher"] = {"person": signers[0][0], "key_id": key_id(signers[0][2])}
    manifest["approvers"] = [{"person": n, "key_id": key_id(k)} for n, _, k in signers[1:]]
    digest = bundle_body_hash(body)
    entries = [_entry(digest, *s) for s in signers]
    return {**body, "sha256": digest, "signatures": entries}


@pytest.mark.parametrize(
    ("signers", "reason"),
    [
        (  # the publisher approves with their own key
            [("olga", "publisher", OLGA), ("olga", "approver", OLGA)],
            bundles.APPROVER_IS_PUBLISHER.format(person="olga"),
        ),
        (  # ... or with a second key of theirs
            [("olga", "publisher", OLGA), ("olga", "approver", _key(9))],
            bundles.APPROVER_IS_PUBLISHER.format(person="olga"),
        ),
        (  # an editor approves
            [("olga", "publisher", OLGA), ("ed", "approver", ED)],
            bundles.APPROVER_IS_EDITOR.format(person="ed"),
        ),
        (  # someone else's approval made with the publisher's key
            [("olga", "publisher", OLGA), ("bob", "approver", OLGA)],
            bundles.APPROVAL_WITH_PUBLISHER_KEY.format(
                person="bob", key_id=key_id(OLGA), publisher="olga"
            ),
        ),
        (  # ... or with an editor's key
            [("olga", "publisher", OLGA), ("bob", "approver", ED)],
            bundles.APPROVAL_WITH_EDITOR_KEY.format(person="bob", key_id=key_id(ED), editor="ed"),
        ),
        (  # two approvals with one key
            [("olga", "publisher", OLGA), ("bob", "approver", BOB), ("carol", "approver", BOB)],
            bundles.APPROVERS_SHARE_A_KEY.format(people="'bob', 'carol'", key_id=key_id(BOB)),
        ),
    ],
)
def test_four_eyes_is_checked_in_the_signed_manifest(signers, reason):
    body = _four_eyes_body()
    # Every key is trusted for everything, by its right owner: only four eyes can refuse.
    keys = {
        kid: key
        for n, _, k in signers
        for kid, key in trusted(n, k, "publish", "approve", types=("d.t",)).items()
    }
    forged = _forge(body, signers)
    for check in (
        lambda: verify_bundle(serialize_bundle(forged), keys),
        lambda: inspect_bundle(forged),
        lambda: sign_bundle(bundle_body(forged), signers),
    ):
        with pytest.raises(BundleInvalid) as caught:
            check()
        assert caught.value.problem is Problem.FOUR_EYES
        assert caught.value.reason == reason


def test_a_key_the_key_set_does_not_let_approve_is_refused(data: bytes):
    """A viewer who created a key: trusted, theirs, but not allowed to approve."""
    keys = {**TRUSTED, **trusted("bob", BOB)}
    error = problem_of(data, keys)
    assert error.problem is Problem.NOT_ALLOWED
    assert error.reason == bundles.KEY_MAY_NOT_SIGN.format(
        index=1, signer="bob", role="approver", key_id=key_id(BOB), action="approve", roles="none"
    )
    # A publisher's key that may only approve does not publish either.
    error = problem_of(data, {**TRUSTED, **trusted("olga", OLGA, "approve")})
    assert error.problem is Problem.NOT_ALLOWED
    assert "may not publish (its roles: approve)" in error.reason


def test_an_outdated_format_is_refused_with_its_own_reason(signed: dict):
    old = copy.deepcopy(signed)
    old["format"] = "evidence-workbench.bundle/1"
    manifest = old["manifest"]
    manifest["publisher"] = "olga"
    manifest["approvers"] = ["bob", "carol"]
    del manifest["editors"]
    for document in (resign(old), serialize_bundle(resign(old))):
        error = problem_of(document)
        assert error.problem is Problem.OUTDATED
        assert error.reason == bundles.OUTDATED_FORMAT.format(
            found="evidence-workbench.bundle/1", expected=bundles.read_formats()
        )
    assert FORMAT == "evidence-workbench.bundle/3"


def test_the_cli_refuses_a_bundle_the_key_set_does_not_let_approve(tmp_path: Path, data: bytes):
    from compiler_tools import main

    path = tmp_path / "bundle.json"
    path.write_bytes(data)
    entries = _key_set_entries()
    (tmp_path / KEY_SET_FILE).write_bytes(key_set_json(entries))
    out, err = io.StringIO(), io.StringIO()
    assert main(["verify-bundle", str(path), "--public-key", str(tmp_path)], out, err) == 0
    assert "approved by 'bob', 'carol'" in out.getvalue()
    entries[1]["roles"] = []  # bob: a viewer
    (tmp_path / KEY_SET_FILE).write_bytes(key_set_json(entries))
    out, err = io.StringIO(), io.StringIO()
    assert main(["verify-bundle", str(path), "--public-key", str(tmp_path)], out, err) == 1
    assert (
        err.getvalue()
        == "invalid: "
        + bundles.KEY_MAY_NOT_SIGN.format(
            index=1,
            signer="bob",
            role="approver",
            key_id=key_id(BOB),
            action="approve",
            roles="none",
        )
        + "\n"
    )
