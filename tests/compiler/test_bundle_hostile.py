"""Hostile values in a bundle's signed manifest and signatures (compiler_trust): a value of the
wrong JSON type where a string is expected, or a huge one, is refused with `BundleInvalid`
naming the field — by signing, by verifying bytes or a parsed document, by inspecting, and by
`verify-bundle` (exit 1, as for every other invalid bundle) — never with a traceback."""

from __future__ import annotations

import copy
import io
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_bundle import ROOT, SIGNERS, TRUSTED, _key_set_entries, resign, small_body

from compiler_tools import main
from compiler_trust import (
    KEY_SET_FILE,
    BundleInvalid,
    Problem,
    bundle_body,
    inspect_bundle,
    key_set_json,
    serialize_bundle,
    sign_bundle,
    verify_bundle,
)

WRONG_TYPES = {"a list": ["bob"], "an object": {"person": "bob"}, "a number": 7, "null": None}
HUGE = "x" * 1_000_000
LONGEST_REASON = 2_000
"""A refusal names a huge value; it does not print a megabyte of it."""

# Every string the verifier reads from the manifest and the signatures, where it sits and how
# the refusal names it (pydantic's location, as `BundleInvalid` writes it).
FIELDS: dict[str, tuple[Any, ...]] = {
    "manifest.publisher.person": ("manifest", "publisher", "person"),
    "manifest.publisher.key_id": ("manifest", "publisher", "key_id"),
    "manifest.approvers[0].person": ("manifest", "approvers", 0, "person"),
    "manifest.approvers[0].key_id": ("manifest", "approvers", 0, "key_id"),
    "manifest.editors[0].person": ("manifest", "editors", 0, "person"),
    "manifest.author": ("manifest", "author"),
    "manifest.decision_type": ("manifest", "decision_type"),
    "manifest.version": ("manifest", "version"),
    "manifest.published_at": ("manifest", "published_at"),
    "manifest.compiler_version": ("manifest", "compiler_version"),
    "signatures[0].signer": ("signatures", 0, "signer"),
    "signatures[0].role": ("signatures", 0, "role"),
    "signatures[0].key_id": ("signatures", 0, "key_id"),
    "signatures[0].signature": ("signatures", 0, "signature"),
}


@pytest.fixture(scope="module")
def signed() -> dict:
    return sign_bundle(small_body(), SIGNERS)


def _with(document: dict, path: tuple[Any, ...], value: Any) -> dict:
    """A copy of the document with the value at `path` replaced and its sha256 recomputed:
    what someone crafting a bundle writes, so that the hash check passes."""
    changed = copy.deepcopy(document)
    *parents, last = path
    target = changed
    for part in parents:
        target = target[part]
    target[last] = value
    return resign(changed)


def _refusals(document: dict, inspect: bool = True) -> list[BundleInvalid]:
    """The refusal of each library entry point that reads a whole bundle (inspection checks
    integrity and the schema only: it accepts a long but well-formed string)."""
    refusals = []
    checks = [
        lambda: verify_bundle(serialize_bundle(document), TRUSTED),
        lambda: verify_bundle(document, TRUSTED),
    ]
    for check in checks + ([lambda: inspect_bundle(document)] if inspect else []):
        with pytest.raises(BundleInvalid) as caught:
            check()
        refusals.append(caught.value)
    return refusals


def _cli(tmp_path: Path, document: dict) -> tuple[int, str]:
    path = tmp_path / "bundle.json"
    path.write_bytes(serialize_bundle(document))
    (tmp_path / "keys").mkdir(exist_ok=True)
    (tmp_path / "keys" / KEY_SET_FILE).write_bytes(key_set_json(_key_set_entries()))
    out, err = io.StringIO(), io.StringIO()
    code = main(["verify-bundle", str(path), "--public-key", str(tmp_path / "keys")], out, err)
    return code, err.getvalue()


# --------------------------------------------------------------------------- signing


@pytest.mark.parametrize("value", WRONG_TYPES.values(), ids=WRONG_TYPES.keys())
@pytest.mark.parametrize("role", ["publisher", "approvers"])
def test_signing_refuses_a_signatory_whose_person_is_not_a_string(role, value):
    """sign_bundle writes each signer's key id into the manifest entry naming them; an entry
    whose person is a list or an object used to raise TypeError (unhashable) there."""
    body = small_body()
    if role == "publisher":
        body["manifest"]["publisher"] = {"person": value}
        where = "manifest.publisher.person"
    else:
        body["manifest"]["approvers"][0] = {"person": value}
        where = "manifest.approvers[0].person"
    with pytest.raises(BundleInvalid) as caught:
        sign_bundle(body, SIGNERS)
    assert caught.value.problem is Problem.SCHEMA
    assert f"{where}: Input should be a valid string" in caught.value.reason


def test_signing_refuses_a_huge_signatory_with_a_short_reason():
    body = small_body()
    body["manifest"]["approvers"][0] = {"person": HUGE}
    with pytest.raises(BundleInvalid) as caught:
        sign_bundle(body, SIGNERS)
    assert caught.value.problem is Problem.SIGNATURES
    assert len(caught.value.reason) < LONGEST_REASON
    assert "characters" in caught.value.reason  # how long the value was, not the value


# --------------------------------------------------------------------------- verification


@pytest.mark.parametrize("value", WRONG_TYPES.values(), ids=WRONG_TYPES.keys())
@pytest.mark.parametrize("where", FIELDS)
def test_a_value_of_the_wrong_type_is_refused_naming_the_field(signed, tmp_path, where, value):
    crafted = _with(signed, FIELDS[where], value)
    for refusal in _refusals(crafted):
        assert refusal.problem is Problem.SCHEMA
        assert f"  {where}: " in refusal.reason
        assert where in [_location(e["loc"]) for e in refusal.errors]
    code, err = _cli(tmp_path, crafted)
    assert code == 1
    assert err.startswith("invalid: the bundle does not match") and f"  {where}: " in err


def _location(loc: list[Any]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


@pytest.mark.parametrize("where", [*FIELDS, "format", "sha256"])
def test_a_huge_value_is_refused_with_a_short_reason(signed, tmp_path, where):
    path = FIELDS.get(where, (where,))
    crafted = _with(signed, path, HUGE)
    if where == "sha256":
        crafted["sha256"] = HUGE
    for refusal in _refusals(crafted, inspect=where != "manifest.compiler_version"):
        assert len(refusal.reason) < LONGEST_REASON, refusal.reason[:300]
        assert all(len(e["msg"]) < LONGEST_REASON for e in refusal.errors)
    code, err = _cli(tmp_path, crafted)
    assert code == 1
    assert err.startswith("invalid: ") and len(err) < LONGEST_REASON


@pytest.mark.parametrize("value", [*WRONG_TYPES.values(), HUGE], ids=[*WRONG_TYPES, "huge"])
@pytest.mark.parametrize("member", ["manifest", "signatures", "scenarios", "source_classes"])
def test_a_member_of_the_wrong_shape_is_refused(signed, member, value):
    for refusal in _refusals(_with(signed, (member,), value)):
        assert refusal.problem is Problem.SCHEMA
        assert f"  {member}" in refusal.reason
        assert len(refusal.reason) < LONGEST_REASON


def test_a_body_whose_manifest_is_not_an_object_is_refused_when_signing(signed):
    for value in [["olga"], 7, None, HUGE]:
        body = {**bundle_body(signed), "manifest": value}
        with pytest.raises(BundleInvalid) as caught:
            sign_bundle(body, SIGNERS)
        assert "  manifest: " in caught.value.reason
        assert len(caught.value.reason) < LONGEST_REASON


def test_the_command_line_prints_a_refusal_not_a_traceback(signed, tmp_path):
    """The real process: a crafted manifest naming its publisher with a list."""
    path = tmp_path / "bundle.json"
    path.write_bytes(serialize_bundle(_with(signed, FIELDS["manifest.publisher.person"], ["o"])))
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / KEY_SET_FILE).write_bytes(key_set_json(_key_set_entries()))
    done = subprocess.run(
        [sys.executable, "-m", "compiler_tools", "verify-bundle", str(path), "--public-key",
         str(tmp_path / "keys")],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "manifest.publisher.person: Input should be a valid string" in done.stderr


def _nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    "value",
    [{"evidence-workbench.bundle/2"}, b"evidence-workbench.bundle/2", _nested(100_000)],
    ids=["a set", "bytes", "nested 100,000 deep"],
)
def test_a_parsed_document_whose_format_is_no_json_value_is_refused(signed, value):
    """A caller handing over Python objects instead of parsed JSON gets a refusal too."""
    with pytest.raises(BundleInvalid) as caught:
        verify_bundle({**signed, "format": value}, TRUSTED)
    assert caught.value.problem is Problem.FORMAT
    assert "unsupported bundle: it declares a format that is" in caught.value.reason
