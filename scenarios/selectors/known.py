"""What a candidate's free-text fields can be checked against and offered from."""

from __future__ import annotations

from dataclasses import dataclass

from contracts.documents import contract_document
from contracts.models import DecisionType, SourceClass
from scenarios.models import Corpus


@dataclass(frozen=True)
class KnownValues:
    """What a candidate's free-text fields can be checked against and offered from: the
    catalogue's classes, every version's propositions and purposes, and the roles and
    purposes the corpus already uses (with its directory's role hierarchy)."""

    evidence_classes: frozenset[str]
    retired_classes: frozenset[str]
    propositions: frozenset[str]
    purposes: frozenset[str]
    roles: frozenset[str]
    has_contract: bool


def known_values(*, decision_type: DecisionType, corpus: Corpus | None = None) -> KnownValues:
    classes = dict(SourceClass.objects.values_list("key", "retired"))
    documents = [contract_document(v) for v in decision_type.versions.order_by("number")]
    propositions = {p.get("key") for d in documents for p in d.get("propositions", ())}
    purposes = {purpose for d in documents for purpose in d.get("purposes", ())}
    roles: set[str] = set()
    if corpus is not None:
        for data in corpus.candidates.values_list("data", flat=True):
            roles.update(data.get("allowed_roles", ()))
            purposes.update(data.get("allowed_purposes", ()))
        for child, parents in (corpus.directory.get("role_parents") or {}).items():
            roles.add(child)
            roles.update(parents if isinstance(parents, list) else [parents])
    return KnownValues(
        evidence_classes=frozenset(k for k, retired in classes.items() if not retired),
        retired_classes=frozenset(k for k, retired in classes.items() if retired),
        propositions=frozenset(p for p in propositions if isinstance(p, str)),
        purposes=frozenset(p for p in purposes if isinstance(p, str)),
        roles=frozenset(r for r in roles if isinstance(r, str)),
        has_contract=bool(documents),
    )
