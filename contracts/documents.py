"""The one place a contract version becomes the document the compiler receives.

`contract_document` builds the plain JSON shape of `compiler.Contract` from a version's
rows (or returns the frozen snapshot of a version that can no longer change);
`compiled_contract` validates it with the compiler's own model. Everything that hands a
contract to the compiler — the JSON preview, runs, bundles — goes through these two.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from compiler import Contract, sha256_hex

from .models import ContractVersion, Proposition


@dataclass(frozen=True)
class Problem:
    """One reason the compiler would refuse the document, located as pydantic locates it."""

    loc: tuple[str | int, ...]
    msg: str

    @property
    def where(self) -> str:
        return ".".join(str(part) for part in self.loc) or "contract"


class ContractInvalid(ValueError):
    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("; ".join(f"{p.where}: {p.msg}" for p in problems))
        self.problems = problems


def proposition_document(proposition: Proposition) -> dict[str, Any]:
    return {
        "key": proposition.key,
        "accepted_classes": list(proposition.accepted_classes),
        "required": proposition.required,
        "max_items": proposition.max_items,
        "description": proposition.description,
    }


def draft_document(
    version: ContractVersion, propositions: list[Proposition] | None = None
) -> dict[str, Any]:
    """The document built from the version's rows, whether or not the compiler accepts it."""
    if propositions is None:
        propositions = list(version.propositions.all())
    return {
        "decision_type": version.decision_type.key,
        "version": str(version.number),
        "purposes": list(version.purposes),
        "propositions": [proposition_document(p) for p in propositions],
        "policy": version.policy_document(),
    }


def contract_document(version: ContractVersion) -> dict[str, Any]:
    """What the version says: its rows while editable, its frozen snapshot afterwards."""
    if not version.is_editable and version.snapshot is not None:
        return version.snapshot
    return draft_document(version)


def validate_document(document: dict[str, Any]) -> Contract:
    try:
        return Contract.model_validate(document)
    except ValidationError as exc:
        raise ContractInvalid(
            [Problem(loc=tuple(e["loc"]), msg=e["msg"]) for e in exc.errors()]
        ) from exc


def compiled_contract(version: ContractVersion) -> Contract:
    """The compiler's `Contract` for this version; `ContractInvalid` lists every problem."""
    return validate_document(contract_document(version))


def compiler_json(contract: Contract) -> dict[str, Any]:
    """Exactly what the compiler receives, every default filled in."""
    return contract.model_dump(mode="json")


def document_sha256(document: dict[str, Any]) -> str:
    return sha256_hex(document)
