"""The catalogue entries a bundle carries, and the hash an approval records over them."""

from __future__ import annotations

from typing import Any

from compiler import sha256_hex
from contracts.documents import compiled_contract
from contracts.models import ContractVersion, SourceClass


def bundle_source_classes(contract: dict[str, Any]) -> list[dict[str, Any]]:
    """The catalogue entries a bundle of `contract` carries: the classes it accepts."""
    accepted = sorted({c for p in contract["propositions"] for c in p["accepted_classes"]})
    return [
        {
            "key": c.key,
            "label": c.label,
            "description": c.description,
            "authority_tier": c.authority_tier,
            "weak": c.weak,
        }
        for c in SourceClass.objects.filter(key__in=accepted).order_by("key")
    ]


def catalogue_sha256(version: ContractVersion) -> str:
    """The hash an approval records over the catalogue entries the bundle would carry, so
    relabelling a class after approval cannot reach a signed bundle unreviewed."""
    contract = compiled_contract(version).model_dump(mode="json")
    return sha256_hex(bundle_source_classes(contract))
