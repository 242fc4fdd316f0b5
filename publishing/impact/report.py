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

    @property
    def verdicts(self) -> dict[str, Any]:
        """What the reviewer reads first: every violation (each with `new` and the owner's
        `justification`, if any), the new findings and the widenings."""
        return self.document["verdicts"]

    @property
    def widenings(self) -> list[dict[str, Any]]:
        """Items the version admits that the published version did not, in some scenario or
        variant: `[{"id", "where": [{"scenario", "perturbation"}], "text"}]`. An approval
        must acknowledge each."""
        return self.document["verdicts"]["widenings"]

    @property
    def widening_ids(self) -> list[str]:
        return [w["id"] for w in self.widenings]

    @property
    def propositions(self) -> list[dict[str, Any]]:
        return self.document["propositions"]


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
    from scenarios.services import catalogue_tiers, weak_classes

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
    verdicts = report_verdicts(version, entries, has_published=published is not None)
    summary.update(
        violations=len(verdicts["violations"]),
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
        "headline": _verdict_headline(verdicts) + headline(version, baseline, summary),
        "verdicts": verdicts,
        "propositions": _per_proposition(draft_json, entries, verdicts),
        "contract_changes": changes,
        "scenarios": entries,
        "summary": summary,
    }
    return ImpactReport(document=document, sha256=sha256_hex(document))


def violation_key(scenario: str, verdict: Any) -> tuple[str, str, str]:
    """What names a violation stably: (scenario, perturbation name, proposition or "")."""
    return (scenario, verdict["perturbation"], verdict["proposition"] or "")


def report_verdicts(
    version: ContractVersion, entries: list[dict[str, Any]], *, has_published: bool
) -> dict[str, Any]:
    """Every violation of the version (with the owner's justification, when recorded), the
    findings the published version does not have, and the widenings."""
    from contracts.models import ViolationJustification

    justified = {
        j.key: {"text": j.text, "author": j.author.get_username()}
        for j in ViolationJustification.objects.filter(version=version).select_related("author")
    }
    violations, findings = [], []
    for entry in entries:
        for v in entry.get("verdicts", []):
            shown = {"scenario": entry["name"], **v}
            if v["kind"] == "violation":
                key = violation_key(entry["name"], v)
                violations.append({**shown, "key": list(key), "justification": justified.get(key)})
            elif v["new"]:
                findings.append(shown)
    violations.sort(key=lambda v: not v["new"])
    return {
        "violations": violations,
        "findings": findings,
        "widenings": _widenings(entries) if has_published else [],
    }


def _widenings(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each item some compile under the version admits that the same compile under the
    published version did not, with every (scenario, perturbation) where it does."""
    where: dict[str, list[dict[str, str]]] = {}
    for entry in entries:
        for change in entry["admitted_changes"]:
            for item in change["added"]:
                where.setdefault(item, []).append(
                    {"scenario": entry["name"], "perturbation": change["perturbation"]}
                )
    return [
        {
            "id": item,
            "where": places,
            "text": f"{item} is admitted in {len(places)} compile(s) where the published "
            f"version did not admit it (first: '{places[0]['scenario']}', "
            f"{places[0]['perturbation']}).",
        }
        for item, places in sorted(where.items())
    ]


def _verdict_headline(verdicts: dict[str, Any]) -> list[str]:
    lines = []
    violations = verdicts["violations"]
    if violations:
        first = violations[0]
        lines.append(
            f"{len(violations)} violation(s): a perturbation breaks what it must keep. First: "
            f"'{first['scenario']}', {first['label']} — {first['message']}"
        )
    if verdicts["widenings"]:
        n = len(verdicts["widenings"])
        lines.append(
            f"{n} widening(s): item(s) this version admits that the published one did not; "
            "approving needs each acknowledged."
        )
    return lines


def _per_proposition(
    contract: dict[str, Any], entries: list[dict[str, Any]], verdicts: dict[str, Any]
) -> list[dict[str, Any]]:
    """One row per proposition: violations, new findings, slot changes and newly failing
    expectations across every scenario."""
    rows = {
        p["key"]: {"proposition": p["key"], "violations": 0, "findings": 0, "flips": 0,
                   "newly_failing": 0}
        for p in contract["propositions"]
    }  # fmt: skip
    for v in verdicts["violations"]:
        if v["proposition"] in rows:
            rows[v["proposition"]]["violations"] += 1
    for v in verdicts["findings"]:
        if v["proposition"] in rows:
            rows[v["proposition"]]["findings"] += 1
    for entry in entries:
        for flip in entry["flips"]:
            if flip["proposition"] in rows:
                rows[flip["proposition"]]["flips"] += 1
        for failure in entry["newly_failing"]:
            # The failures about one proposition: its state, `required` or resource ids.
            if failure["what"] in ("slot", "required", "resource_ids") and failure["key"] in rows:
                rows[failure["key"]]["newly_failing"] += 1
    return list(rows.values())


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
