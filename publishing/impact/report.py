"""The whole impact report of a version: its contract changes and every scenario of its
decision type, against the published version, with a headline, a summary and its hash."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from compiler import COMPILER_VERSION
from compiler.canonical import sha256_hex
from contracts.documents import compiled_contract
from contracts.models import ContractVersion

from .contract_changes import contract_changes
from .scenario_report import scenario_report
from .sentences import headline

FORMAT = "evidence-workbench.impact/1"


@dataclass(frozen=True)
class ImpactReport:
    document: dict[str, Any]
    sha256: str

    @property
    def summary(self) -> dict[str, int]:
        return self.document["summary"]

    @property
    def headline(self) -> list[str]:
        return self.document["headline"]

    @property
    def contract_changes(self) -> list[dict[str, Any]]:
        return self.document["contract_changes"]

    @property
    def scenarios(self) -> list[dict[str, Any]]:
        return self.document["scenarios"]

    @property
    def changed_scenarios(self) -> list[dict[str, Any]]:
        return [s for s in self.scenarios if s["changed"]]


def baseline_version(version: ContractVersion) -> ContractVersion | None:
    """What a version is compared with: the decision type's published version (for a
    published version itself, the one it superseded)."""
    versions = version.decision_type.versions.exclude(pk=version.pk)
    published = versions.filter(status=ContractVersion.Status.PUBLISHED).first()
    if published is not None:
        return published
    if version.status == ContractVersion.Status.PUBLISHED:
        return (
            versions.filter(status=ContractVersion.Status.SUPERSEDED, number__lt=version.number)
            .order_by("-number")
            .first()
        )
    return None


def impact_report(version: ContractVersion) -> ImpactReport:
    """The report for `version` against the published contract; `ContractInvalid` if the
    version itself is not a valid contract."""
    from scenarios.models import Scenario
    from scenarios.services import weak_classes

    draft = compiled_contract(version)
    draft_json = draft.model_dump(mode="json")
    baseline = baseline_version(version)
    published = compiled_contract(baseline) if baseline is not None else None
    published_json = published.model_dump(mode="json") if published is not None else None
    changes = contract_changes(published_json, draft_json)

    scenarios = list(
        Scenario.objects.filter(decision_type=version.decision_type)
        .select_related("decision_type")
        .order_by("position", "name", "id")
    )
    corpora, corpus_hashes = _corpora({s.corpus_id for s in scenarios})
    weak = weak_classes()
    contract_hashes = {
        "draft": _hash(draft_json),
        "published": _hash(published_json) if published_json is not None else "",
    }
    entries = [
        scenario_report(
            s,
            draft,
            published,
            corpora[s.corpus_id],
            weak,
            hashes={**contract_hashes, "corpus": corpus_hashes[s.corpus_id]},
        )
        for s in scenarios
    ]
    summary = _summary(changes, entries, has_published=published is not None)
    document = {
        "format": FORMAT,
        "decision_type": version.decision_type.key,
        "version": {"number": version.number, "sha256": version.sha256 or _hash(draft_json)},
        "published": (
            {"number": baseline.number, "sha256": _hash(published_json)}
            if baseline is not None
            else None
        ),
        "compiler_version": COMPILER_VERSION,
        "weak_classes": list(weak),
        "headline": headline(version, baseline, summary),
        "contract_changes": changes,
        "scenarios": entries,
        "summary": summary,
    }
    return ImpactReport(document=document, sha256=sha256_hex(document))


def _corpora(corpus_ids: set[int]) -> tuple[dict[int, Any], dict[int, str]]:
    """Each corpus as the compiler reads it, and a hash of its content (for the memo key):
    two queries for all of them."""
    from scenarios import compiling
    from scenarios.models import Corpus, CorpusCandidate

    directories = dict(Corpus.objects.filter(pk__in=corpus_ids).values_list("pk", "directory"))
    rows: dict[int, list[Any]] = {pk: [] for pk in corpus_ids}
    candidates = CorpusCandidate.objects.filter(corpus_id__in=corpus_ids).order_by("position", "id")
    for corpus_id, data in candidates.values_list("corpus_id", "data"):
        rows[corpus_id].append(data)
    corpora = {pk: compiling.CorpusModels.build(directories[pk], rows[pk]) for pk in corpus_ids}
    hashes = {pk: sha256_hex([directories[pk], rows[pk]]) for pk in corpus_ids}
    return corpora, hashes


def _summary(
    changes: list[dict[str, Any]], entries: list[dict[str, Any]], *, has_published: bool
) -> dict[str, int]:
    return {
        "contract_changes": len(changes) if has_published else 0,
        "scenarios": len(entries),
        "changed_scenarios": sum(e["changed"] for e in entries),
        "compiles": sum(e["compiles"] for e in entries) * (2 if has_published else 1),
        "flipped_slots": sum(len(e["flips"]) for e in entries),
        "admitted_changes": sum(len(e["admitted_changes"]) for e in entries),
        "newly_failing": sum(len(e["newly_failing"]) for e in entries),
        "now_passing": sum(len(e["now_passing"]) for e in entries),
        "problems": sum(len(e["problems"]) for e in entries),
    }


def _hash(document: Any) -> str:
    return sha256_hex(document)
