"""A signed bundle of a hospital pharmacy's generic-substitution rule, published by the
formulary pharmacist (ines) and approved by the ward's clinical pharmacist (tomas), with the
dates of its statements chosen by the test: for the checks on when a statement was signed."""

from __future__ import annotations

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from compiler import sha256_hex
from compiler_trust import (
    FORMAT,
    ApprovalStatement,
    PublicationStatement,
    TrustedKey,
    assemble_bundle,
    bundle_body_hash,
    key_id,
    normalise_body,
    serialize_bundle,
    sign_statement,
)

# Fixed seeds: deterministic keys for tests, never how real keys are made.
INES = Ed25519PrivateKey.from_private_bytes(bytes([41]) * 32)
TOMAS = Ed25519PrivateKey.from_private_bytes(bytes([42]) * 32)
REGISTERED = "2026-03-10T09:00:00+00:00"  # both keys were registered then
PUBLISHED = "2026-04-01T12:00:00+00:00"
REPORT = "ab" * 32
TYPE = "pharmacy.generic_substitution"
CONTRACT = {
    "decision_type": TYPE,
    "version": "3",
    "purposes": ["dispensing"],
    "propositions": [{"key": "bioequivalence", "accepted_classes": ["regulator_listing"]}],
}


def keys(valid_from: str | None = REGISTERED) -> dict[str, TrustedKey]:
    return {
        key_id(INES): TrustedKey(
            INES.public_key(),
            "ines",
            frozenset({"publish"}),
            "cli",
            None,
            valid_from,
            publish_types=frozenset({TYPE}),
            approve_types=frozenset(),
        ),
        key_id(TOMAS): TrustedKey(
            TOMAS.public_key(),
            "tomas",
            frozenset({"approve"}),
            "cli",
            None,
            valid_from,
            publish_types=frozenset(),
            approve_types=frozenset({TYPE}),
        ),
    }


def bundle(*, approved_at: str = PUBLISHED, published_at: str = PUBLISHED) -> bytes:
    body = normalise_body(
        {
            "format": FORMAT,
            "manifest": {
                "decision_type": "pharmacy.generic_substitution",
                "version": "3",
                "parent_sha256": None,
                "author": "ines",
                "publisher": {"person": "ines", "key_id": key_id(INES)},
                "editors": [{"person": "ines", "key_id": key_id(INES)}],
                "approvers": [{"person": "tomas", "key_id": key_id(TOMAS)}],
                "published_at": published_at,
                "compiler_version": "0.1.0",
                "report_sha256": REPORT,
            },
            "contract": CONTRACT,
            "source_classes": [
                {"key": "regulator_listing", "label": "Regulator listing", "authority_tier": 1}
            ],
        }
    )
    contract_sha256 = sha256_hex(body["contract"])
    approval = ApprovalStatement(
        decision_type="pharmacy.generic_substitution",
        version="3",
        contract_sha256=contract_sha256,
        report_sha256=REPORT,
        signer="tomas",
        key_id=key_id(TOMAS),
        signed_at=approved_at,
    )
    publication = PublicationStatement(
        decision_type="pharmacy.generic_substitution",
        version="3",
        contract_sha256=contract_sha256,
        bundle_sha256=bundle_body_hash(body),
        signer="ines",
        key_id=key_id(INES),
        signed_at=published_at,
    )
    return serialize_bundle(
        assemble_bundle(body, sign_statement(publication, INES), [sign_statement(approval, TOMAS)])
    )
