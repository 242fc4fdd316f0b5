"""A signed bundle of the Atlas example contract for the distribution tests (pull, receipts,
contract tests): fixed keys, the seed's base scenario with its expected slot states.

`atlas_bundle` is a format-2 bundle, which carries its scenarios (as bundles published before
format 3 do, and stay); `atlas_bundle_3` is the format the workbench publishes now, with its
test suite beside it."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from compiler_trust import (
    FORMAT_2,
    KEY_SET_FILE,
    key_set_json,
    public_key_pem,
    serialize_bundle,
    serialize_suite,
    sign_bundle,
    split_suite,
)

ROOT = Path(__file__).resolve().parents[2]
ATLAS = json.loads((ROOT / "examples" / "atlas.json").read_text())
ATLAS_TYPE = ATLAS["contract"]["decision_type"]
CLASSES = ("facility_record", "workflow_event", "approved_waiver", "committee_record",
           "policy_clause")  # fmt: skip
# Fixed seeds: deterministic keys for tests, never how real keys are made.
PUBLISHER = Ed25519PrivateKey.from_private_bytes(bytes([7]) * 32)
APPROVER = Ed25519PrivateKey.from_private_bytes(bytes([8]) * 32)
STRANGER = Ed25519PrivateKey.from_private_bytes(bytes([9]) * 32)
BASE_SLOTS = {"facility_limit": "supported", "review_open": "supported",
              "waiver_valid": "unknown", "continuation_rule": "supported"}  # fmt: skip


def atlas_request() -> dict[str, Any]:
    """The Atlas compile input without its contract: what a service sends with a bundle."""
    return {k: copy.deepcopy(v) for k, v in ATLAS.items() if k != "contract"}


def atlas_scenario(name: str = "atlas-base", slots: dict[str, str] | None = None) -> dict:
    request = atlas_request()
    return {
        "name": name,
        "request": request["request"],
        "corpus": {"directory": request.get("directory", {}),
                   "candidates": request["candidates"]},
        "expected": {"slots": dict(BASE_SLOTS if slots is None else slots)},
    }  # fmt: skip


def atlas_bundle(
    version: str = "3",
    scenarios: list[dict] | None = None,
    parent_sha256: str | None = None,
    contract: dict | None = None,
    publisher: Ed25519PrivateKey = PUBLISHER,
) -> bytes:
    """The file bytes of a bundle of the Atlas contract at `version`, signed by olivia
    (publisher) and rafael (approver)."""
    contract = copy.deepcopy(contract or ATLAS["contract"])
    contract["version"] = version
    body = {
        "format": FORMAT_2,
        "manifest": {
            "decision_type": contract["decision_type"],
            "version": version,
            "parent_sha256": parent_sha256,
            "author": "olivia",
            "editors": [{"person": "olivia"}],
            "approvers": [{"person": "rafael"}],
            "published_at": "2026-09-01T10:00:00+00:00",
            "compiler_version": "0.1.0",
        },
        "contract": contract,
        "source_classes": [{"key": key, "label": key, "authority_tier": 1} for key in CLASSES],
        "scenarios": [atlas_scenario()] if scenarios is None else scenarios,
    }
    signed = sign_bundle(body, [("olivia", "publisher", publisher),
                                ("rafael", "approver", APPROVER)])  # fmt: skip
    return serialize_bundle(signed)


def atlas_bundle_3(
    version: str = "3",
    scenarios: list[dict] | None = None,
    parent_sha256: str | None = None,
) -> tuple[bytes, bytes | None]:
    """The file bytes of a format-3 bundle of the Atlas contract and of its test suite (None
    when `scenarios` is empty), signed as `atlas_bundle` is."""
    signed_2 = json.loads(atlas_bundle(version, scenarios, parent_sha256))
    body = {k: v for k, v in signed_2.items() if k not in ("sha256", "signatures")}
    split, suite = split_suite(body)
    signed = sign_bundle(split, [("olivia", "publisher", PUBLISHER),
                                 ("rafael", "approver", APPROVER)])  # fmt: skip
    return serialize_bundle(signed), (serialize_suite(suite) if suite is not None else None)


def key_set(directory: Path, *types: str) -> Path:
    """The trusted key set (olivia publishes, rafael approves `types`, the Atlas type unless
    others are named) in `directory`/keys.json."""
    scope = sorted(types or (ATLAS_TYPE,))
    directory.mkdir(parents=True, exist_ok=True)
    (directory / KEY_SET_FILE).write_bytes(key_set_json([
        {"person": "olivia", "roles": ["publish"], "publish_types": scope,
         "public_key": public_key_pem(PUBLISHER)},
        {"person": "rafael", "roles": ["approve"], "approve_types": scope,
         "public_key": public_key_pem(APPROVER)},
    ]))  # fmt: skip
    return directory
