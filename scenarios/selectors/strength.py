"""The Suite strength panel of a version: its runs, and the latest one's report arranged for
reading (the score, the counts, each surviving mutant with its advice and proposal, the
equivalent ones apart), with what changed since it ran. The version comes from
`contracts.selectors.version_for_user`, which already checks that the person may see it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db.models import QuerySet
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from compiler.compiled import contract_sha256
from contracts.documents import ContractInvalid, compiled_contract
from contracts.models import ContractVersion
from scenarios.models import MutationRun

# How each way a mutant was killed reads on the panel.
KILLED_BY = {
    "standard": "the standard perturbations",
    "expectations": "a scenario's expectations",
}

# What a proposal pins beside the slot states, in words (expectation document keys).
PIN_WORDS = {
    "admitted": "the exact admitted items",
    "rejected": "the exact rejected items",
    "decision_ready": "whether the decision is ready",
    "blocking": "the propositions that block it",
    "required": "which slots are required",
    "resource_ids": "the items a slot rests on",
}


@dataclass
class StrengthPanel:
    """A finished run's report as the panel shows it."""

    run: MutationRun
    score: int | None  # percent of the non-equivalent mutants killed; None: all equivalent
    totals: dict[str, int]
    surviving: list[dict[str, Any]]
    killed: list[dict[str, Any]]
    equivalent: list[dict[str, Any]]
    # Since the run: the contract changed, scenarios were added or removed.
    contract_changed: bool = False
    scenarios_added: list[str] = field(default_factory=list)
    scenarios_removed: list[str] = field(default_factory=list)

    @property
    def outdated(self) -> bool:
        return self.contract_changed or bool(self.scenarios_added or self.scenarios_removed)


def mutation_runs(*, version: ContractVersion, limit: int = 10) -> QuerySet[MutationRun]:
    return version.mutation_runs.select_related("started_by")[:limit]


def latest_mutation_run(*, version: ContractVersion) -> MutationRun | None:
    return version.mutation_runs.select_related("started_by").first()


def mutation_run_of(*, version: ContractVersion, pk: int) -> MutationRun:
    """One of the version's runs; `MutationRun.DoesNotExist` for any other."""
    try:
        return version.mutation_runs.select_related("decision_type", "version").get(pk=pk)
    except MutationRun.DoesNotExist:
        raise MutationRun.DoesNotExist("No such suite-strength run of this version.") from None


def strength_panel(*, run: MutationRun) -> StrengthPanel | None:
    """The finished run's report arranged for the panel; None before it has one."""
    if run.status != MutationRun.Status.FINISHED or not run.report:
        return None
    report = run.report
    scenarios = set(run.version.decision_type.scenarios.values_list("name", flat=True))
    ran = set(run.scenarios) | {s["name"] for s in run.skipped}
    by_status: dict[str, list[dict[str, Any]]] = {"surviving": [], "killed": [], "equivalent": []}
    for mutant in report.get("mutants", []):
        shown = {
            **mutant,
            "anchor": "mutant-" + _anchor(mutant["key"]),
            "killed_by_words": KILLED_BY.get(mutant.get("killed_by") or "", ""),
            "description_html": code_spans(mutant.get("description", "")),
            "advice_html": code_spans(mutant.get("advice", "")),
            "reasons_html": [code_spans(reason) for reason in mutant.get("reasons", [])],
        }
        proposal = mutant.get("proposal")
        if proposal:
            shown["added"] = proposal.get("name") in scenarios
            shown["proposal_html"] = code_spans(proposal.get("description", ""))
            shown["pins"] = [
                PIN_WORDS.get(key, key) for key in proposal.get("expected", {}) if key != "slots"
            ]
        by_status.setdefault(mutant["status"], []).append(shown)
    score = report.get("score")
    return StrengthPanel(
        run=run,
        score=None if score is None else round(100 * score),
        totals=report.get("totals", {}),
        surviving=by_status["surviving"],
        killed=by_status["killed"],
        equivalent=by_status["equivalent"],
        contract_changed=_contract_sha256(run.version) != run.contract_sha256,
        scenarios_added=sorted(scenarios - ran),
        scenarios_removed=sorted(ran - scenarios),
    )


def _contract_sha256(version: ContractVersion) -> str:
    try:
        return contract_sha256(compiled_contract(version))
    except ContractInvalid:
        return ""


def code_spans(text: str) -> SafeString:
    """The engine's plain words, escaped, with each `name` in backticks as code (isolated
    with `<bdi>`: propositions and classes are the owner's names)."""
    parts = str(text).split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: the text as it is
        return format_html("{}", text)
    return format_html_join(
        "",
        "{}",
        (
            (format_html("<code><bdi>{}</bdi></code>", part) if odd else part,)
            for odd, part in ((i % 2 == 1, part) for i, part in enumerate(parts))
        ),
    )


def _anchor(key: str) -> str:
    """A mutant's key as an HTML id (its keys hold ':' and class keys)."""
    return "".join(char if char.isalnum() or char in "-_" else "-" for char in key)
