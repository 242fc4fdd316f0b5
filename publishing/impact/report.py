"""The whole impact report of a version: its contract changes and every scenario of its
decision type, against the published version, with a headline, a summary and its hash."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from django.utils.safestring import SafeString

from compiler import (
    COMPILER_VERSION,
    PROBE_OPERATORS,
    RELATIONS,
    Contract,
    contract_widenings,
    sha256_hex,
)
from contracts.documents import compiled_contract
from contracts.models import ContractVersion
from contracts.wording import PLAIN, Words

from .contract_changes import contract_changes
from .scenario_report import scenario_report
from .sentences import cause_text, headline

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
        each. First the contract's own widenings (`compiler._widenings`: `{"id", "source":
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
        from .shown import headline_html

        return headline_html(self.document)

    @cached_property
    def scenarios_shown(self) -> list[dict[str, Any]]:
        from .shown import scenarios_shown

        return scenarios_shown(self.scenarios)

    @cached_property
    def widenings_shown(self) -> list[dict[str, Any]]:
        from .shown import widenings_shown

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
    from scenarios.models import Scenario
    from scenarios.services import catalogue_tiers, weak_classes

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
        "propositions": _per_proposition(draft_json, entries, verdicts),
        "contract_changes": changes,
        "scenarios": entries,
        "summary": summary,
    }
    return ImpactReport(document=document, sha256=sha256_hex(document))


def cause_key(verdict: Mapping[str, Any]) -> tuple[str, str, str]:
    """What names a violation's cause stably, with no scenario and no item in it:
    (operator, proposition or "", cause). One justification covers every violation of it."""
    return (verdict["operator"], verdict["proposition"] or "", verdict.get("cause") or "")


def proposition_sha256(contract: Contract, proposition: str) -> str:
    """The hash of what a justification of a cause on `proposition` was written for: the
    proposition's definition in `contract` (the whole contract for a fault of the variant,
    `proposition` "", or for a proposition the contract no longer has)."""
    found = contract.proposition(proposition) if proposition else None
    return sha256_hex((found or contract).model_dump(mode="json"))


def report_verdicts(
    version: ContractVersion,
    entries: list[dict[str, Any]],
    draft: Contract,
    *,
    has_published: bool,
) -> dict[str, Any]:
    """Every violation of the version, one row per cause (`cause_rows`, with the owner's
    justification of the cause, when recorded), the findings the published version does not
    have, and the items admitted anew. A justification written for an earlier edit of its
    proposition (its recorded `proposition_sha256` is not the draft's) counts as none: the
    row carries it as `earlier_justification` for the owner to confirm or rewrite."""
    from contracts.models import ViolationJustification

    justified: dict[tuple[str, str, str], dict[str, Any]] = {}
    for j in ViolationJustification.objects.filter(version=version).select_related("author"):
        current = not j.proposition_sha256 or j.proposition_sha256 == proposition_sha256(
            draft, j.proposition
        )
        justified[j.key] = {
            "text": j.text,
            "author": j.author.get_username(),
            "current": current,
        }
    violations, findings = [], []
    for entry in entries:
        for v in entry.get("verdicts", []):
            shown = {"scenario": entry["name"], **v}
            if v["kind"] == "violation":
                violations.append(shown)
            elif v["new"]:
                findings.append(shown)
    return {
        "violations": cause_rows(violations, justified),
        "findings": findings,
        "widenings": _widenings(entries) if has_published else [],
    }


def cause_rows(
    violations: list[dict[str, Any]], justified: Mapping[tuple[str, str, str], Any]
) -> list[dict[str, Any]]:
    """The violations grouped by cause (`cause_key`), new causes first, then in the order
    the scenarios give them: each row with its `count`, the `scenarios` it touches, every
    `occurrence` (scenario, perturbation, label, message, items, new), the relation it
    breaks, a sentence (`text`), the cause's `justification` or None and, when the only
    one recorded was written for an earlier edit, that one as `earlier_justification`."""
    grouped: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for v in violations:
        grouped.setdefault(cause_key(v), []).append(v)
    rows = []
    for key, occurrences in grouped.items():
        operator, proposition, cause = key
        relation = RELATIONS.get(operator)
        scenarios = list(dict.fromkeys(o["scenario"] for o in occurrences))
        row = {
            "key": list(key),
            "operator": operator,
            "proposition": proposition or None,
            "cause": cause,
            "relation": relation.relation if relation is not None else "",
            "count": len(occurrences),
            "scenarios": scenarios,
            "new": any(o["new"] for o in occurrences),
            "occurrences": [
                {k: o[k] for k in ("scenario", "perturbation", "label", "message", "items", "new")}
                for o in occurrences
            ],
            "justification": None,
            "earlier_justification": None,
        }
        recorded = justified.get(key)
        if recorded is not None:
            shown = {"text": recorded["text"], "author": recorded["author"]}
            row["justification" if recorded.get("current", True) else "earlier_justification"] = (
                shown
            )
        row["text"] = cause_text(row)
        rows.append(row)
    rows.sort(key=lambda row: not row["new"])
    return rows


def contract_widening_rows(published: Contract, draft: Contract) -> list[dict[str, Any]]:
    """The contract's widenings against the published one, as the report lists them (ids
    as `compiler._widenings` gives them, the same as `evidence-compiler test --baseline`)."""
    return [
        {"id": w.id, "source": "contract", "kind": w.kind, "proposition": w.proposition,
         "text": w.detail}
        for w in contract_widenings(published, draft)
    ]  # fmt: skip


def item_widening_text(item: str, places: list[dict[str, str]], words: Words = PLAIN) -> str:
    return words.say(
        "{item} is admitted in {count} compile(s) where the published version did not admit it "
        "(first: {scenario}, {perturbation}).",
        item=words.text(item), count=len(places), scenario=words.name(places[0]["scenario"]),
        perturbation=words.text(places[0]["perturbation"]),
    )  # fmt: skip


def _widenings(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each item some compile under the version admits that the same compile under the
    published version did not, with every (scenario, perturbation) where it does. The
    contract probes' compiles are left out: their items are made up to question the contract
    (`PROBE_OPERATORS`), and what they reveal is the contract's own widenings and verdicts."""
    where: dict[str, list[dict[str, str]]] = {}
    for entry in entries:
        for change in entry["admitted_changes"]:
            if change.get("operator") in PROBE_OPERATORS:
                continue
            for item in change["added"]:
                where.setdefault(item, []).append(
                    {"scenario": entry["name"], "perturbation": change["perturbation"]}
                )
    return [
        {
            "id": item,
            "source": "items",
            "kind": "item_admitted",
            "where": places,
            "text": item_widening_text(item, places),
        }
        for item, places in sorted(where.items())
    ]


def verdict_headline(verdicts: Mapping[str, Any], words: Words = PLAIN) -> list[str]:
    lines = []
    causes = verdicts["violations"]
    if causes:
        count = sum(row["count"] for row in causes)
        lines.append(words.say(
            "{causes} cause(s) of violations ({count} violation(s)): perturbations break what "
            "they must keep. First: {first}", causes=len(causes), count=count,
            first=cause_text(causes[0], words),
        ))  # fmt: skip
    widenings = verdicts["widenings"]
    if widenings:
        in_contract = sum(w["source"] == "contract" for w in widenings)
        parts = [f"{in_contract} change(s) to the contract"] if in_contract else []
        if len(widenings) > in_contract:
            parts.append(f"{len(widenings) - in_contract} item(s) admitted that it did not")
        lines.append(words.say(
            "{count} widening(s) against the published version: {parts}; approving needs each "
            "acknowledged.", count=len(widenings), parts=" and ".join(parts),
        ))  # fmt: skip
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
    for row in verdicts["violations"]:
        if row["proposition"] in rows:
            rows[row["proposition"]]["violations"] += row["count"]
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
