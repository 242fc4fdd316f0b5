"""What a contract and its corpus say about each other, read without compiling."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from compiler._input import Candidate
from compiler._relations.verdicts import FINDING, Verdict


def corpus_findings(
    contract: Any, candidates: Iterable[Candidate], tiers: Mapping[str, str] | None = None
) -> list[Verdict]:
    """What the contract and the corpus say about each other, without compiling:

    * items that claim a proposition whose accepted classes do not include theirs, one finding
      per (proposition, class), with the class's authority tier when `tiers` names it;
    * propositions that no item of the corpus can ever support (none claims it with an
      accepted class).
    """
    tiers = tiers or {}
    candidates = sorted(candidates, key=lambda c: c.id)
    findings = []
    for p in contract.propositions:
        unaccepted: dict[str, list[str]] = {}
        for c in candidates:
            claims = p.key in (*c.supports, *c.contradicts)
            if claims and c.evidence_class not in p.accepted_classes:
                unaccepted.setdefault(c.evidence_class, []).append(c.id)
        for cls, ids in sorted(unaccepted.items()):
            tier = f" (authority tier: {tiers[cls]})" if cls in tiers else ""
            noun = "item claims" if len(ids) == 1 else "items claim"
            findings.append(Verdict(
                kind=FINDING, proposition=p.key, perturbation=None, items=tuple(ids), cause=cls,
                message=f"{len(ids)} {cls} {noun} {p.key}{tier}, which does not accept "
                f"{cls}: intended?",
            ))  # fmt: skip
        if not any(
            p.key in c.supports and c.evidence_class in p.accepted_classes for c in candidates
        ):
            accepted = ", ".join(p.accepted_classes) or "no class"
            findings.append(Verdict(
                kind=FINDING, proposition=p.key, perturbation=None, cause="unsupported",
                message=f"no item of the corpus can ever support {p.key} (it accepts {accepted})",
            ))  # fmt: skip
    keys = {p.key for p in contract.propositions}
    claimed: dict[str, list[str]] = {}
    for c in candidates:
        for key in dict.fromkeys((*c.supports, *c.contradicts)):
            if key not in keys:
                claimed.setdefault(key, []).append(c.id)
    for key, ids in sorted(claimed.items()):
        noun = "item claims" if len(ids) == 1 else "items claim"
        findings.append(Verdict(
            kind=FINDING, proposition=key, perturbation=None, items=tuple(ids),
            cause="not in the contract",
            message=f"{len(ids)} {noun} {key}, which the contract does not ask for: a "
            "proposition dropped or its key mistyped?",
        ))  # fmt: skip
    return findings


def purpose_findings(contract: Any, purposes_used: Iterable[str]) -> list[Verdict]:
    """Each purpose the contract permits that no scenario asks for: a finding (cause: the
    purpose), since no scenario shows what the contract admits for it — an adjacent analytics
    or research purpose added by mistake goes unseen."""
    used = set(purposes_used)
    return [
        Verdict(
            kind=FINDING,
            proposition=None,
            perturbation=None,
            cause=purpose,
            message=f"the contract permits {purpose}, which no scenario asks for: nothing shows "
            "what it admits for it",
        )  # fmt: skip
        for purpose in contract.purposes
        if purpose not in used
    ]
