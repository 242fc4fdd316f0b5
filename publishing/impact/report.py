"""The whole impact report of a version: its contract changes and every scenario of its
decision type, against the published version, with a headline, a summary and its hash."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from django.utils.safestring import SafeString

from compiler import COMPILER_VERSION
from compiler.canonical import sha256_hex
from contracts.documents import compiled_contract
from contracts.models import ContractVersion
from scenarios import compiling
from scenarios.models import Corpus, CorpusCandidate, Scenario
from scenarios.services import catalogue_tiers, weak_classes

from .contract_changes import contract_changes
from .scenario_report import scenario_report
from .sentences import headline
from .shown import headline_html, scenarios_shown, widenings_shown
from .verdicts import contract_widening_rows, per_proposition, report_verdicts, verdict_headline

FORMAT = "evidence-workbench.impact/2"


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

    @property
    def verdicts(self) -> dict[str, Any]:
        """What the reviewer reads first: the violations, one row per cause (`cause_rows`:
        each with its count, scenarios, `new` and the owner's `justification`, if any), the
        new findings and the widenings."""
        return self.document["verdicts"]

    @property
    def widenings(self) -> list[dict[str, Any]]:
        """What the version widens against the published one; an approval must acknowledge
        each. First the contract's own widenings (`compiler.widenings`: `{"id", "source":
        "contract", "kind", "proposition", "text"}`), then each item the version admits that
        the published version did not, in some scenario or variant (`{"id", "source":
        "items", "kind": "item_admitted", "where": [{"scenario", "perturbation"}], "text"}`)."""
        return self.document["verdicts"]["widenings"]

    @property
    def widening_ids(self) -> list[str]:
        return [w["id"] for w in self.widenings]

    @property
    def propositions(self) -> list[dict[str, Any]]:
        return self.document["propositions"]

    # What pages print: the same sentences, escaped, every name in its own <bdi> (`shown`).

    @cached_property
    def headline_html(self) -> list[SafeString]:
        return headline_html(self.document)

    @cached_property
    def scenarios_shown(self) -> list[dict[str, Any]]:
        return scenarios_shown(self.scenarios)

    @cached_property
    def widenings_shown(self) -> list[dict[str, Any]]:
        return widenings_shown(self.widenings)


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
    draft = compiled_contract(version)
    draft_json = draft.model_dump(mode="json")
    baseline = baseline_version(version)
    published = compiled_contract(baseline) if baseline is not None else None
    published_json = published.model_dump(mode="json") if published is not None else None
    changes = contract_changes(published_json, draft_json)

    scenarios = list(
        Scenario.objects.live()
        .filter(decision_type=version.decision_type)
        .select_related("decision_type")
        .order_by("position", "name", "id")
    )
    corpora, corpus_hashes = _corpora({s.corpus_id for s in scenarios})
    weak = weak_classes()
    tiers = catalogue_tiers()
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
            catalogue=tiers,
        )
        for s in scenarios
    ]
    summary = _summary(changes, entries, has_published=published is not None)
    verdicts = report_verdicts(version, entries, draft, has_published=published is not None)
    if published is not None:
        verdicts["widenings"] = contract_widening_rows(published, draft) + verdicts["widenings"]
    summary.update(
        violations=sum(row["count"] for row in verdicts["violations"]),
        violation_causes=len(verdicts["violations"]),
        new_findings=len(verdicts["findings"]),
        widenings=len(verdicts["widenings"]),
    )
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
        "headline": verdict_headline(verdicts) + headline(version, baseline, summary),
        "verdicts": verdicts,
        "propositions": per_proposition(draft_json, entries, verdicts),
        "contract_changes": changes,
        "scenarios": entries,
        "summary": summary,
    }
    return ImpactReport(document=document, sha256=sha256_hex(document))


def _corpora(corpus_ids: set[int]) -> tuple[dict[int, Any], dict[int, str]]:
    """Each corpus as the compiler reads it, and a hash of its content (for the memo key):
    two queries for all of them."""
    directories = dict(Corpus.objects.filter(pk__in=corpus_ids).values_list("pk", "directory"))
    rows: dict[int, list[Any]] = {pk: [] for pk in corpus_ids}
    candidates = (
        CorpusCandidate.objects.live().filter(corpus_id__in=corpus_ids).order_by("position", "id")
    )
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
