"""The whole impact report of a version: its contract changes and every scenario of its
decision type, against the published version, with a headline, a summary and its hash."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from django.db.models import QuerySet

from compiler import COMPILER_VERSION, Contract, sha256_hex
from contracts.documents import compiled_contract
from contracts.models import ContractVersion
from scenarios import compiling
from scenarios.models import Corpus, CorpusCandidate, Scenario
from scenarios.services import catalogue_tiers, weak_classes

from .contract_changes import contract_changes
from .scenario_report import scenario_report
from .sentences import headline
from .shown import headline_html, page_head, scenarios_shown, widenings_shown
from .verdicts import contract_widening_rows, per_proposition, report_verdicts, verdict_headline

FORMAT = "evidence-workbench.impact/2"


class ImpactReport:
    """A report: `shown` (its head as pages read it, `shown.page_head`), its sha256, and,
    read only when asked for, its whole head (`head`) and its scenario entries
    (`scenarios`, `document`): a stored report keeps each apart, and a page prints the
    bounded head and a page of entries (`entries.entries_page`), never the whole."""

    def __init__(
        self,
        shown: dict[str, Any],
        sha256: str,
        scenarios: Callable[[], list[dict[str, Any]]],
        *,
        head: Callable[[], dict[str, Any]],
        stored_id: int | None = None,
    ) -> None:
        self.shown, self.sha256 = shown, sha256
        self._scenarios, self._head = scenarios, head
        self.stored_id = stored_id  # the StoredImpactReport whose rows hold the scenarios

    @classmethod
    def whole(cls, head: dict[str, Any], entries: list[dict[str, Any]]) -> ImpactReport:
        """The report of these entries, hashed once, here (RFC 8785, what approvals record)."""
        sha256 = sha256_hex({**head, "scenarios": entries})
        return cls(page_head(head), sha256, lambda: entries, head=lambda: head)

    @cached_property
    def head(self) -> dict[str, Any]:
        """Every section of the report but its scenarios, whole."""
        return self._head()

    @cached_property
    def document(self) -> dict[str, Any]:
        """The whole report, as hashed: every scenario's entry included."""
        return {**self.head, "scenarios": self.scenarios}

    @property
    def summary(self) -> dict[str, int]:
        return self.shown["summary"]

    @property
    def headline(self) -> list[str]:
        return self.shown["headline"]

    @property
    def contract_changes(self) -> list[dict[str, Any]]:
        return self.shown["contract_changes"]

    @cached_property
    def scenarios(self) -> list[dict[str, Any]]:
        return self._scenarios()

    @property
    def changed_scenarios(self) -> list[dict[str, Any]]:
        return [s for s in self.scenarios if s["changed"]]

    @property
    def verdicts(self) -> dict[str, Any]:
        """What the reviewer reads first: the violations, one row per cause (`cause_rows`:
        each with its count, scenarios, `new` and the owner's `justification`, if any), the
        new findings and the widenings; whole (`shown_verdicts` is what pages print)."""
        return self.head["verdicts"]

    @property
    def shown_verdicts(self) -> dict[str, Any]:
        """The verdicts as pages print them (`shown.page_head`)."""
        return self.shown["verdicts"]

    @property
    def causes(self) -> list[dict[str, Any]]:
        """The causes of violations, each with its count, scenarios, sentence and
        justification (its occurrences bounded)."""
        return self.shown["verdicts"]["violations"]

    @property
    def widenings(self) -> list[dict[str, Any]]:
        """What the version widens against the published one; an approval must acknowledge
        each. First the contract's own widenings (`compiler._widenings`: `{"id", "source":
        "contract", "kind", "proposition", "text"}`), then each item the version admits that
        the published version did not, in some scenario or variant (`{"id", "source":
        "items", "kind": "item_admitted", "where": [{"scenario", "perturbation"}], "text"}`)."""
        return self.head["verdicts"]["widenings"]

    @property
    def widening_ids(self) -> list[str]:
        return [w["id"] for w in self.shown["verdicts"]["widenings"]]

    @property
    def propositions(self) -> list[dict[str, Any]]:
        return self.shown["propositions"]

    # What pages print: the same sentences, escaped, every name in its own <bdi> (`shown`).

    @cached_property
    def headline_html(self) -> list[str]:
        return headline_html(self.shown)

    @cached_property
    def scenarios_shown(self) -> list[dict[str, Any]]:
        return scenarios_shown(self.scenarios)

    @cached_property
    def widenings_shown(self) -> list[dict[str, Any]]:
        return widenings_shown(self.shown["verdicts"]["widenings"])


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


@dataclass(frozen=True)
class ReportInputs:
    """What every scenario of a report is compiled against: both contracts, the weak
    classes and the catalogue's tiers (a slice of the report builds them again)."""

    version: ContractVersion
    baseline: ContractVersion | None
    draft: Contract
    published: Contract | None
    draft_json: dict[str, Any]
    published_json: dict[str, Any] | None
    weak: Sequence[str]
    tiers: Mapping[str, int]

    @property
    def contract_hashes(self) -> dict[str, str]:
        published = self.published_json
        return {"draft": _hash(self.draft_json), "published": _hash(published) if published else ""}


def report_inputs(version: ContractVersion) -> ReportInputs:
    """`ContractInvalid` if the version is not a valid contract."""
    draft = compiled_contract(version)
    baseline = baseline_version(version)
    published = compiled_contract(baseline) if baseline is not None else None
    return ReportInputs(
        version=version,
        baseline=baseline,
        draft=draft,
        published=published,
        draft_json=draft.model_dump(mode="json"),
        published_json=published.model_dump(mode="json") if published is not None else None,
        weak=weak_classes(),
        tiers=catalogue_tiers(),
    )


def report_scenarios(version: ContractVersion) -> QuerySet[Scenario]:
    """The scenarios of the report, in its order."""
    return (
        Scenario.objects.live()
        .filter(decision_type_id=version.decision_type_id)
        .order_by("position", "name", "id")
    )


def scenario_entries(inputs: ReportInputs, scenarios: Sequence[Scenario]) -> list[dict[str, Any]]:
    """The report's entries of these scenarios (the compiles: the costly part)."""
    corpora, corpus_hashes = _corpora({s.corpus_id for s in scenarios})
    hashes = inputs.contract_hashes
    return [
        scenario_report(
            s,
            inputs.draft,
            inputs.published,
            corpora[s.corpus_id],
            inputs.weak,
            hashes={**hashes, "corpus": corpus_hashes[s.corpus_id]},
            catalogue=inputs.tiers,
        )
        for s in scenarios
    ]


def impact_report(version: ContractVersion) -> ImpactReport:
    """The report for `version` against the published contract, computed here in one pass;
    `ContractInvalid` if the version itself is not a valid contract."""
    inputs = report_inputs(version)
    scenarios = list(report_scenarios(version).select_related("decision_type"))
    entries = scenario_entries(inputs, scenarios)
    return ImpactReport.whole(report_head(inputs, entries), entries)


def report_head(inputs: ReportInputs, entries: list[dict[str, Any]]) -> dict[str, Any]:
    """Every section of the report but its scenarios, from their entries (in order)."""
    version, baseline, draft = inputs.version, inputs.baseline, inputs.draft
    published, published_json = inputs.published, inputs.published_json
    changes = contract_changes(published_json, inputs.draft_json)
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
    return {
        "format": FORMAT,
        "decision_type": version.decision_type.key,
        "version": {
            "number": version.number,
            "sha256": version.sha256 or _hash(inputs.draft_json),
        },
        "published": (
            {"number": baseline.number, "sha256": _hash(published_json)}
            if baseline is not None
            else None
        ),
        "compiler_version": COMPILER_VERSION,
        "weak_classes": list(inputs.weak),
        "headline": verdict_headline(verdicts) + headline(version, baseline, summary),
        "verdicts": verdicts,
        "propositions": per_proposition(inputs.draft_json, entries, verdicts),
        "contract_changes": changes,
        "summary": summary,
    }


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
