"""A key's roles are scoped to decision types: the key set says which types each key may
publish and approve for, and `verify_bundle` (and `verify-bundle`) refuses a bundle whose
publisher key may not publish its type or whose approver key may not approve it.

The domain is a harbour: `harbour.berth` (which berth a ship is given; owned by ada, reviewed
by amos) and `harbour.pilotage` (which pilot boards a ship; owned by bruno only)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from compiler_tools import main
from compiler_trust import (
    FORMAT,
    KEY_MAY_NOT_SIGN_TYPE,
    KEY_SET_FILE,
    KEY_SET_FORMAT,
    KEY_SET_WITHOUT_TYPES,
    BundleInvalid,
    KeyLoadError,
    Problem,
    key_id,
    key_set_json,
    load_public_keys,
    parse_key_set,
    public_key_pem,
    serialize_bundle,
    sign_bundle,
    verify_bundle,
)

BERTH, PILOTAGE = "harbour.berth", "harbour.pilotage"


def _key(seed: int) -> Ed25519PrivateKey:
    return Ed25519PrivateKey.from_private_bytes(bytes([seed]) * 32)


ADA, AMOS, BRUNO = _key(41), _key(42), _key(43)

# What a workbench exports: ada owns the berth type, amos reviews it, bruno owns pilotage.
ENTRIES = [
    {"person": "ada", "roles": ["publish"], "publish_types": [BERTH],
     "public_key": public_key_pem(ADA)},
    {"person": "amos", "roles": ["approve"], "approve_types": [BERTH],
     "public_key": public_key_pem(AMOS)},
    {"person": "bruno", "roles": ["publish"], "publish_types": [PILOTAGE],
     "public_key": public_key_pem(BRUNO)},
]  # fmt: skip


def berth_bundle(publisher: str, key: Ed25519PrivateKey) -> bytes:
    """A bundle of the berth type published by `publisher` with `key`, approved by amos."""
    body = {
        "format": FORMAT,
        "manifest": {
            "decision_type": BERTH,
            "version": "1",
            "parent_sha256": None,
            "author": publisher,
            "editors": [{"person": publisher, "key_id": key_id(key)}],
            "approvers": [{"person": "amos"}],
            "published_at": "2026-10-05T08:00:00+00:00",
            "compiler_version": "0.1.0",
        },
        "contract": {
            "decision_type": BERTH,
            "version": "1",
            "purposes": ["allocate_berth"],
            "propositions": [{"key": "draught_fits", "accepted_classes": ["survey"]}],
        },
        "source_classes": [{"key": "survey", "label": "Hull survey", "authority_tier": 1}],
    }
    signed = sign_bundle(body, [(publisher, "publisher", key), ("amos", "approver", AMOS)])
    return serialize_bundle(signed)


@pytest.fixture
def keys(tmp_path: Path) -> Path:
    (tmp_path / KEY_SET_FILE).write_bytes(key_set_json(ENTRIES))
    return tmp_path


def cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(args), out, err)
    return code, out.getvalue(), err.getvalue()


def test_the_owner_of_another_type_cannot_publish_it(keys: Path, tmp_path: Path):
    """The issue's case: bruno owns pilotage only, signs a berth bundle with his genuine key,
    and the berth's reviewer approves it: refused, naming the key, the role and the type."""
    data = berth_bundle("bruno", BRUNO)
    with pytest.raises(BundleInvalid) as caught:
        verify_bundle(data, load_public_keys(keys))
    expected = KEY_MAY_NOT_SIGN_TYPE.format(
        index=0, signer="bruno", role="publisher", key_id=key_id(BRUNO), action="publish",
        decision_type=BERTH, types=f"'{PILOTAGE}'",
    )  # fmt: skip
    assert caught.value.problem is Problem.NOT_ALLOWED
    assert caught.value.reason == expected
    path = tmp_path / "berth.bundle.json"
    path.write_bytes(data)
    code, out, err = cli("verify-bundle", str(path), "--public-key", str(keys))
    assert (code, out, err) == (1, "", f"invalid: {expected}\n")


def test_the_types_owner_publishes_it_with_the_same_approval(keys: Path, tmp_path: Path):
    data = berth_bundle("ada", ADA)
    verified = verify_bundle(data, load_public_keys(keys))
    assert verified.manifest.decision_type == BERTH
    path = tmp_path / "berth.bundle.json"
    path.write_bytes(data)
    code, out, _ = cli("verify-bundle", str(path), "--public-key", str(keys))
    assert code == 0 and "approved by 'amos'" in out


def test_a_reviewer_of_another_type_cannot_approve_it(tmp_path: Path):
    """amos reviews pilotage only now: his approval of a berth bundle no longer counts."""
    entries = [dict(e) for e in ENTRIES]
    entries[1]["approve_types"] = [PILOTAGE]
    with pytest.raises(BundleInvalid) as caught:
        verify_bundle(berth_bundle("ada", ADA), parse_key_set(key_set_json(entries)))
    assert caught.value.reason == KEY_MAY_NOT_SIGN_TYPE.format(
        index=1, signer="amos", role="approver", key_id=key_id(AMOS), action="approve",
        decision_type=BERTH, types=f"'{PILOTAGE}'",
    )  # fmt: skip
    # A publisher's types do not let the same key approve, nor the reverse.
    entries[1].update(roles=["publish", "approve"], publish_types=[BERTH], approve_types=[])
    with pytest.raises(BundleInvalid, match="may not approve decision type 'harbour.berth' "):
        verify_bundle(berth_bundle("ada", ADA), parse_key_set(key_set_json(entries)))


def test_a_key_set_without_types_is_read_but_signs_nothing(keys: Path, tmp_path: Path):
    """A format-1 key set says a key may publish, not what: reading it as site-wide is what
    let one type's owner publish another's, so a bundle verified with it is refused, saying
    to export the key set again."""
    old = json.loads((keys / KEY_SET_FILE).read_text())
    old["format"] = "evidence-workbench.keys/1"
    for entry in old["keys"]:
        del entry["publish_types"], entry["approve_types"]
    (keys / KEY_SET_FILE).write_text(json.dumps(old))
    loaded = load_public_keys(keys)
    assert {k.person: (k.roles, k.publish_types) for k in loaded.values()} == {
        "ada": ({"publish"}, None), "amos": ({"approve"}, None), "bruno": ({"publish"}, None),
    }  # fmt: skip
    path = tmp_path / "berth.bundle.json"
    path.write_bytes(berth_bundle("ada", ADA))
    code, _, err = cli("verify-bundle", str(path), "--public-key", str(keys))
    assert code == 1
    assert err == "invalid: " + KEY_SET_WITHOUT_TYPES.format(
        index=0, signer="ada", role="publisher", key_id=key_id(ADA), action="publish",
        unscoped="'evidence-workbench.keys/1'",
    ) + "\n"  # fmt: skip
    assert "export the key set again" in err and "GET /api/v1/types/{key}/keys" in err


def test_a_key_set_entry_of_the_current_format_must_say_its_types(tmp_path: Path):
    document = json.loads(key_set_json(ENTRIES))
    assert document["format"] == KEY_SET_FORMAT == "evidence-workbench.keys/2"
    assert document["keys"][1]["publish_types"] == [] and document["keys"][1]["approve_types"] == [
        BERTH
    ]
    for change, member in (
        (lambda e: e.pop("approve_types"), "approve_types"),
        (lambda e: e.update(publish_types=BERTH), "publish_types"),
        (lambda e: e.update(publish_types=[""]), "publish_types"),
    ):
        broken = json.loads(key_set_json(ENTRIES))
        change(broken["keys"][2])
        with pytest.raises(KeyLoadError, match=rf"^keys\[2\]\.{member}: a list of decision type"):
            parse_key_set(json.dumps(broken))
