"""The verdict sections of the impact report: the violations grouped by cause with the
owners' justifications, the findings the published version does not have, the widenings
against it, and the per-proposition table, with the headline sentences they give."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compiler import PROBE_OPERATORS, RELATIONS, Contract, contract_widenings, sha256_hex
from contracts.models import ContractVersion, ViolationJustification
from contracts.wording import PLAIN, Words

from .sentences import cause_text


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
        "widenings": widenings(entries) if has_published else [],
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
        row: dict[str, Any] = {
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


def item_widening_text(
    item: str, places: list[dict[str, str]], words: Words = PLAIN, count: int | None = None
) -> str:
    """`count`: the places in all, when `places` holds only the first (`shown.page_head`)."""
    return words.say(
        "{item} is admitted in {count} compile(s) where the published version did not admit it "
        "(first: {scenario}, {perturbation}).",
        item=words.text(item), count=len(places) if count is None else count,
        scenario=words.name(places[0]["scenario"]),
        perturbation=words.text(places[0]["perturbation"]),
    )  # fmt: skip


def widenings(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
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


def per_proposition(
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
