"""Does the review catch the contract mistakes owners make, on domains the demo does not cover?

    .venv/bin/python bench/mutation_score.py [--json] [--domain NAME]... [--demo] [--repeat 3]

Mutation testing (`compiler._mutation`) over the four contract-test directories of
bench/domains/ (a hospital's trial enrolment, an insurer's settlement above authority, a gas
network's emergency entry, and, written as a holdout after the probes were last changed, a
machine-tool maker's export-licence release), each written from its owner's side before any
mutant was run.
Every mistake kind is applied to each contract, one mutant at a time, and run twice:

* against the **standard suite**: the scenarios without their owner's expectations, so only
  the review (review flags, the catalogue check) can notice a mutant;
* against **mutation-aware tests**: the scenarios with the owner's expectations, plus, as a
  scenario each, the proposal of every mutant the standard suite left surviving (what an owner
  gets by clicking "add this scenario").

A mutant is "equivalent" when no output of the suite (each scenario's base and standard
variants) differs from the contract's. The headline is the share of the mistakes that change
an output which the standard suite flags (target at least 90%).

Then the harmless edits (`HARMLESS`, data: one named function per edit, per domain): what a
careful owner changes without weakening the contract. One is "flagged" when the standard
review raises for it a review flag (on some scenario) or a catalogue problem the original
does not (target: none). Accepting a new class, even one of higher authority ahead of the
others, is not among them: it is a widening (`class_added`) the reviewer acknowledges, and the
probes rightly say that the class that was alone is now a fallback of lower authority.

`--demo` also times mutation testing of the demo's Atlas contract on its stories, which needs
the workbench (a throwaway SQLite database, as bench/sweep.py builds them), against the
standard review of the same stories in the same run: attempts interleaved, medians
(target: at most 30 s).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from compiler import (  # noqa: E402
    EQUIVALENT,
    KILLED,
    MUTATION_KINDS,
    SURVIVING,
    CompileInput,
    CompileOutput,
    Contract,
    Mutant,
    MutantResult,
    MutationCase,
    MutationReport,
    compile_input,
    load_input,
    mutants,
    observed,
    run_mutation,
)
from compiler._mutation import review  # noqa: E402
from compiler_tools import (  # noqa: E402
    ContractFile,
    SourceClassEntry,
    load_tests,
    mutation_cases,
    read_document,
)

DOMAINS = ROOT / "bench" / "domains"
SCORE_TARGET = 0.9
DEMO_TARGET_SECONDS = 30.0


# --------------------------------------------------------------------------- a domain


@dataclass(frozen=True)
class Domain:
    """One contract-test directory: its contract, its catalogue and its scenarios."""

    name: str
    contract: Contract
    classes: tuple[SourceClassEntry, ...]
    cases: tuple[MutationCase, ...]  # with the owner's expectations

    @property
    def catalogue(self) -> dict[str, int]:
        return {c.key: c.tier for c in self.classes}

    @property
    def weak(self) -> tuple[str, ...]:
        return tuple(c.key for c in self.classes if c.weak)

    def standard_cases(self) -> list[MutationCase]:
        return [MutationCase(c.name, c.document) for c in self.cases]

    def corpus(self) -> list[Any]:
        return list({c.id: c for case in self.cases for c in case.document.candidates}.values())


def load_domain(directory: Path) -> Domain:
    header = ContractFile.model_validate(read_document(directory / "contract.yaml"))
    tests = load_tests(directory)
    cases = tuple(mutation_cases(tests))
    return Domain(directory.name, tests.contract, tuple(header.source_classes), cases)


# --------------------------------------------------------------------------- harmless edits
#
# What a careful owner changes without weakening the contract, as data: one function per edit,
# from the domain (contract and catalogue) to the edited domain. Written from the contracts,
# not from the probes: each is something an owner does in a tidy-up or a review round.


def _proposition(domain: Domain, key: str, **changes: Any) -> Domain:
    propositions = tuple(
        p.model_copy(update=changes) if p.key == key else p for p in domain.contract.propositions
    )
    return _contract(domain, propositions=propositions)


def _contract(domain: Domain, **changes: Any) -> Domain:
    return dataclasses.replace(domain, contract=domain.contract.model_copy(update=changes))


def _policy(domain: Domain, **changes: Any) -> Domain:
    return _contract(domain, policy=domain.contract.policy.model_copy(update=changes))


def _reworded(domain: Domain, **descriptions: str) -> Domain:
    for key, text in descriptions.items():
        domain = _proposition(domain, key, description=text)
    return domain


def _propositions_ordered(domain: Domain, keys: Sequence[str]) -> Domain:
    by_key = {p.key: p for p in domain.contract.propositions}
    assert sorted(keys) == sorted(by_key)
    return _contract(domain, propositions=tuple(by_key[k] for k in keys))


def _classes(domain: Domain, change: Callable[[SourceClassEntry], SourceClassEntry | None]):
    kept = (change(c) for c in domain.classes)
    return dataclasses.replace(domain, classes=tuple(c for c in kept if c is not None))


def trial_reworded(d: Domain) -> Domain:
    """Reword the descriptions after the ethics committee's comments."""
    return _reworded(
        d,
        informed_consent="The participant's consent on the current form is on file, not withdrawn.",
        renal_function_adequate="Estimated GFR >= 45 mL/min/1.73m2, sampled in the 28 days "
        "before enrolment.",
    )


def trial_propositions_reordered(d: Domain) -> Domain:
    """List the clinical criteria before consent, as the screening log does."""
    return _propositions_ordered(d, ["inclusion_criteria_met", "renal_function_adequate",
                                     "no_prohibited_medication", "pregnancy_test_negative",
                                     "informed_consent"])  # fmt: skip


def trial_purposes_reordered(d: Domain) -> Domain:
    """Put source data verification first (alphabetical, the governance template's order)."""
    return _contract(d, purposes=tuple(sorted(d.contract.purposes)))


def trial_version_bumped(d: Domain) -> Domain:
    """Bump the version for protocol amendment 3's paperwork."""
    return _contract(d, version="4.1")


def trial_renal_one_item(d: Domain) -> Domain:
    """Let the renal criterion rest on one result: no file ever has two in force."""
    return _proposition(d, "renal_function_adequate", max_items=1)


def trial_floor_raised(d: Domain) -> Domain:
    """Raise the floor for background material from 0.5 to 0.6."""
    return _policy(d, min_relevance=0.6)


def trial_unused_weak_class_retired(d: Domain) -> Domain:
    """Retire coordinator emails from the catalogue: no system sends them any more."""
    return _classes(d, lambda c: None if c.key == "coordinator_email" else c)


def claims_reworded(d: Domain) -> Domain:
    """Reword two descriptions in the standards team's house style."""
    return _reworded(
        d,
        fraud_screen_clear="No open SIU referral on the claim.",
        sanctions_clear="All payees screened within 30 days of payment; no match.",
    )


def claims_propositions_reordered(d: Domain) -> Domain:
    """Put the financial-crime checks first, as the payment checklist does."""
    return _propositions_ordered(d, ["sanctions_clear", "fraud_screen_clear", "policy_in_force",
                                     "peril_covered", "loss_quantum_verified",
                                     "reinsurer_notified"])  # fmt: skip


def claims_purposes_reordered(d: Domain) -> Domain:
    """List the audit purpose first."""
    return _contract(d, purposes=tuple(reversed(d.contract.purposes)))


def claims_version_bumped(d: Domain) -> Domain:
    """Bump the version to 7.3 for the annual re-approval."""
    return _contract(d, version="7.3")


def claims_policy_renamed(d: Domain) -> Domain:
    """Rename the assembly policy and bump its version."""
    return _policy(d, name="major-loss-settlement-packet", version=4)


def claims_audit_purpose_dropped(d: Domain) -> Domain:
    """Drop the internal audit purpose nobody has used: audit reads claims another way."""
    return _contract(d, purposes=("claim_settlement",))


def claims_floor_raised(d: Domain) -> Domain:
    """Raise the floor for guidance from 0.4 to 0.5."""
    return _policy(d, min_relevance=0.5)


def claims_triage_flagged_weak(d: Domain) -> Domain:
    """Flag the triage model's summaries as weak: a score is not a screening."""
    return _classes(d, lambda c: c.model_copy(update={"weak": True})
                    if c.key == "triage_model_summary" else c)  # fmt: skip


def claims_unused_weak_class_retired(d: Domain) -> Domain:
    """Retire call centre notes from the catalogue: none reaches a major loss file."""
    return _classes(d, lambda c: None if c.key == "call_centre_note" else c)


def gas_reworded(d: Domain) -> Domain:
    """Reword the descriptions after the legal team's review."""
    return _reworded(
        d,
        legal_basis_for_entry="A magistrates' warrant, or the duty manager's written emergency "
        "authorisation under the statutory power of entry.",
        occupant_unreachable="Every contact attempt (phone, emergency contact, door) failed.",
    )


def gas_propositions_reordered(d: Domain) -> Domain:
    """Put the legal basis first, as the entry form does."""
    return _propositions_ordered(d, ["legal_basis_for_entry", "gas_escape_confirmed",
                                     "occupant_unreachable", "external_isolation_failed",
                                     "psr_checked", "police_informed"])  # fmt: skip


def gas_purposes_reordered(d: Domain) -> Domain:
    """List the review purpose first."""
    return _contract(d, purposes=tuple(reversed(d.contract.purposes)))


def gas_version_bumped(d: Domain) -> Domain:
    """Bump the version to 2.1 for the winter procedures."""
    return _contract(d, version="2.1")


def gas_floor_raised(d: Domain) -> Domain:
    """Raise the floor for briefings from 0.45 to 0.55."""
    return _policy(d, min_relevance=0.55)


def gas_tiers_as_numbers(d: Domain) -> Domain:
    """Write the catalogue's authority tiers as numbers instead of words."""
    return _classes(d, lambda c: c.model_copy(update={"authority_tier": c.tier}))


def gas_labels_reworded(d: Domain) -> Domain:
    """Rename two catalogue labels for the control room's screens."""
    labels = {"contact_centre_log": "Contact log (calls and door visits)",
              "emergency_entry_form": "Emergency entry authorisation (duty manager)"}  # fmt: skip
    return _classes(d, lambda c: c.model_copy(update={"label": labels.get(c.key, c.label)}))


def export_reworded(d: Domain) -> Domain:
    """Reword two descriptions after outside counsel's review of the compliance manual."""
    return _reworded(
        d,
        item_within_licence="The machine, as built and with every option fitted, is rated "
        "within the control list entries the general licence covers.",
        end_use_assured="The end user has signed that the machine is for civil use at the named "
        "site and will not be re-exported or transferred without our written consent.",
    )


def export_propositions_reordered(d: Domain) -> Domain:
    """List the screening first, as the release checklist in the compliance manual does."""
    return _propositions_ordered(d, ["parties_screened", "destination_permitted",
                                     "item_within_licence", "end_use_assured",
                                     "installation_site_verified"])  # fmt: skip


def export_purposes_reordered(d: Domain) -> Domain:
    """List the audit purpose first."""
    return _contract(d, purposes=tuple(reversed(d.contract.purposes)))


def export_version_bumped(d: Domain) -> Domain:
    """Bump the version to 3.1 for the annual compliance programme review."""
    return _contract(d, version="3.1")


def export_policy_renamed(d: Domain) -> Domain:
    """Rename the assembly policy after the licence it serves, and bump its version."""
    return _policy(d, name="general-licence-release", version=3)


def export_floor_raised(d: Domain) -> Domain:
    """Raise the floor for briefings from 0.4 to 0.5."""
    return _policy(d, min_relevance=0.5)


def export_screening_three_parties(d: Domain) -> Domain:
    """Cap the screenings at three: the company no longer ships through intermediate consignees."""
    return _proposition(d, "parties_screened", max_items=3)


def export_unused_weak_class_retired(d: Domain) -> Domain:
    """Retire CRM account notes from the catalogue: sales no longer writes them."""
    return _classes(d, lambda c: None if c.key == "crm_note" else c)


HARMLESS: dict[str, tuple[Callable[[Domain], Domain], ...]] = {
    "trial_enrolment": (trial_reworded, trial_propositions_reordered, trial_purposes_reordered,
                        trial_version_bumped, trial_renal_one_item,
                        trial_floor_raised, trial_unused_weak_class_retired),
    "claim_payout": (claims_reworded, claims_propositions_reordered, claims_purposes_reordered,
                     claims_version_bumped, claims_policy_renamed,
                     claims_audit_purpose_dropped, claims_floor_raised,
                     claims_triage_flagged_weak, claims_unused_weak_class_retired),
    "gas_entry": (gas_reworded, gas_propositions_reordered, gas_purposes_reordered,
                  gas_version_bumped, gas_floor_raised,
                  gas_tiers_as_numbers, gas_labels_reworded),
    "export_licence": (export_reworded, export_propositions_reordered,
                       export_purposes_reordered, export_version_bumped, export_policy_renamed,
                       export_floor_raised, export_screening_three_parties,
                       export_unused_weak_class_retired),
}  # fmt: skip


# --------------------------------------------------------------------------- measuring


@dataclass
class Review:
    """What the standard review shows for a domain: its flags (per scenario), catalogue
    problems, and every input its sweeps compiled with what an owner can pin of the output."""

    flags: set[tuple[str, ...]]
    problems: set[str]
    inputs: list[tuple[CompileInput, dict[str, Any]]]


def standard_review(domain: Domain) -> Review:
    flags: set[tuple[str, ...]] = set()
    inputs: list[tuple[CompileInput, dict[str, Any]]] = []
    for case in domain.cases:
        document = case.document.model_copy(update={"contract": domain.contract})
        compiled: list[tuple[CompileInput, CompileOutput]] = []

        def recorded(given: CompileInput, compiled=compiled) -> CompileOutput:
            output = compile_input(given)
            compiled.append((given, output))
            return output

        report = review.run_sweep(document, domain.weak, domain.catalogue, recorded)
        flags |= {(case.name, *flag) for flag in review.flags(report)}
        inputs += [(given, observed(output, given)) for given, output in compiled]
    problems = set(review.catalogue_problems(domain.contract, domain.catalogue))
    return Review(flags, problems, inputs)


def changes_an_output(contract: Contract, inputs: Iterable[tuple[CompileInput, dict]]) -> bool:
    """Whether `contract` gives another pinnable output than the original on any input the
    original's suite compiled (what `run_mutation` calls not equivalent)."""
    for given, seen in inputs:
        document = given.model_copy(update={"contract": contract})
        if observed(compile_input(document), document) != seen:
            return True
    return False


def proposal_case(proposal: Mapping[str, Any], contract: Contract) -> MutationCase:
    document = load_input({"request": proposal["request"], "directory": proposal["directory"],
                           "candidates": proposal["candidates"],
                           "contract": contract.model_dump(mode="json")})  # fmt: skip
    return MutationCase(proposal["name"], document, proposal["expected"])


def measure_domain(domain: Domain, log: Callable[[str], None]) -> dict[str, Any]:
    started = time.perf_counter()
    original = standard_review(domain)
    review_seconds = time.perf_counter() - started
    found = mutants(domain.contract, catalogue=domain.catalogue, weak_classes=domain.weak,
                    corpus=domain.corpus())  # fmt: skip
    log(f"{domain.name}: {len(found)} mutants, standard suite ...")
    started = time.perf_counter()
    standard = run_mutation(domain.contract, domain.standard_cases(), catalogue=domain.catalogue,
                            weak_classes=domain.weak, mutants=found)  # fmt: skip
    standard_seconds = time.perf_counter() - started
    proposals = [
        proposal_case(r.proposal, domain.contract)
        for r in standard.results
        if r.status == SURVIVING and r.proposal is not None
    ]
    # A mutant the standard suite kills is killed again on the same scenarios (the review
    # compares each scenario with itself), so only the others are run again: with the owner's
    # expectations, then with the proposals added as scenarios too.
    log(f"{domain.name}: the owner's expectations ...")
    owner = _rerun(domain, found, standard.results, list(domain.cases))
    log(f"{domain.name}: mutation-aware tests ({len(proposals)} proposals added) ...")
    aware = _rerun(domain, found, standard.results, [*domain.cases, *proposals])
    rows = []
    for mutant, first, by_owner, second in zip(found, standard.results, owner, aware, strict=True):
        changes = first.status == SURVIVING or (
            first.status == KILLED and changes_an_output(mutant.contract, original.inputs)
        )
        rows.append({**mutant.to_json(), "changes_output": changes,
                     "standard": _outcome(first), "owner": _outcome(by_owner),
                     "aware": _outcome(second), "advice": second.advice or first.advice,
                     "proposal": _shown_proposal(first.proposal)})  # fmt: skip
    log(f"{domain.name}: harmless edits ...")
    harmless = [harmless_row(edit, domain, original) for edit in HARMLESS[domain.name]]
    return {
        "decision_type": domain.contract.decision_type,
        "scenarios": len(domain.cases),
        "candidates": len(domain.corpus()),
        "proposals_added": len(proposals),
        "seconds": {"standard_review": review_seconds, "mutation_standard": standard_seconds},
        "score_standard": standard.score,
        "score_aware": MutationReport(aware).score,
        "mutants": rows,
        "harmless": harmless,
    }


def _rerun(
    domain: Domain,
    found: Sequence[Mutant],
    first: Sequence[MutantResult],
    cases: Sequence[MutationCase],
) -> list[MutantResult]:
    """`first`'s results, with every mutant it did not kill run again on `cases`."""
    again = [m for m, r in zip(found, first, strict=True) if r.status != KILLED]
    results = run_mutation(domain.contract, cases, catalogue=domain.catalogue,
                           weak_classes=domain.weak, mutants=again).results  # fmt: skip
    by_key = {r.mutant.key: r for r in results}
    return [by_key.get(m.key, r) for m, r in zip(found, first, strict=True)]


def _shown_proposal(proposal: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A proposal without its pool (the JSON stays readable)."""
    if proposal is None:
        return None
    return {k: proposal[k] for k in ("name", "based_on", "pool_from", "expected") if k in proposal}


def _outcome(result: Any) -> dict[str, Any]:
    return {"status": result.status, "killed_by": result.killed_by, "reasons": result.reasons}


def harmless_row(edit: Callable[[Domain], Domain], domain: Domain, original: Review):
    edited = edit(domain)
    seen = standard_review(edited)
    new_flags = sorted(seen.flags - original.flags)
    new_problems = sorted(seen.problems - original.problems)
    return {
        "name": edit.__name__,
        "description": (edit.__doc__ or "").strip(),
        "flagged": bool(new_flags or new_problems),
        "new_flags": [list(f) for f in new_flags],
        "new_catalogue_problems": new_problems,
        "changes_output": changes_an_output(edited.contract, original.inputs),
    }


# --------------------------------------------------------------------------- figures


def tally(domains: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    rows = [r for d in domains.values() for r in d["mutants"]]
    by_kind = {}
    for kind in MUTATION_KINDS:
        of_kind = [r for r in rows if r["kind"] == kind]
        by_kind[kind] = _counts(of_kind)
    changing = [r for r in rows if r["changes_output"]]
    flagged = [r for r in changing if r["standard"]["status"] == KILLED]
    aware = [r for r in changing if r["aware"]["status"] == KILLED]
    owner = [r for r in changing if r["owner"]["status"] == KILLED]
    harmless = [h for d in domains.values() for h in d["harmless"]]
    return {
        "by_kind": by_kind,
        "total": _counts(rows),
        "headline": {
            "mistakes": len(rows),
            "changing_an_output": len(changing),
            "flagged_by_standard_suite": len(flagged),
            "share_flagged_by_standard_suite": len(flagged) / len(changing) if changing else None,
            "killed_with_owner_expectations": len(owner),
            "killed_by_mutation_aware_tests": len(aware),
            "share_killed_by_mutation_aware_tests": len(aware) / len(changing)
            if changing
            else None,
            "flagged_without_changing_an_output": sum(
                1 for r in rows if not r["changes_output"] and r["standard"]["status"] == KILLED
            ),
            "harmless_edits": len(harmless),
            "harmless_edits_flagged": sum(1 for h in harmless if h["flagged"]),
            "target_share": SCORE_TARGET,
        },
    }


def _counts(rows: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    return {
        "mutants": len(rows),
        "changing_an_output": sum(1 for r in rows if r["changes_output"]),
        "killed_standard": sum(1 for r in rows if r["standard"]["status"] == KILLED),
        "flagged_changing": sum(
            1 for r in rows if r["changes_output"] and r["standard"]["status"] == KILLED
        ),
        "killed_owner": sum(1 for r in rows if r["owner"]["status"] == KILLED),
        "killed_aware": sum(1 for r in rows if r["aware"]["status"] == KILLED),
        "surviving": sum(1 for r in rows if r["aware"]["status"] == SURVIVING),
        "equivalent": sum(1 for r in rows if r["aware"]["status"] == EQUIVALENT),
        "surviving_standard": sum(1 for r in rows if r["standard"]["status"] == SURVIVING),
        "equivalent_standard": sum(1 for r in rows if r["standard"]["status"] == EQUIVALENT),
    }


def print_figures(domains: Mapping[str, Mapping[str, Any]], totals: Mapping[str, Any]) -> None:
    for name, d in domains.items():
        print(f"{name} ({d['decision_type']}): {d['scenarios']} scenarios, {d['candidates']} "
              f"candidates, {len(d['mutants'])} mutants, {d['proposals_added']} proposals "
              f"added; standard review {d['seconds']['standard_review']:.2f} s, mutation "
              f"{d['seconds']['mutation_standard']:.2f} s")  # fmt: skip
    print()
    header = ("kind", "mutants", "changes", "std killed", "of changes", "+owner", "+proposals",
              "surviving", "equiv")  # fmt: skip
    print(f"{header[0]:<28}" + "".join(f"{h:>11}" for h in header[1:]))
    keys = ("mutants", "changing_an_output", "killed_standard", "flagged_changing",
            "killed_owner", "killed_aware", "surviving", "equivalent")  # fmt: skip
    for kind, counts in [*totals["by_kind"].items(), ("total", totals["total"])]:
        print(f"{kind:<28}" + "".join(f"{counts[k]:>11}" for k in keys))
    print("  changes: the mutant changes an output of the suite (a base or a standard variant)")
    print("  std killed: flagged by the standard suite, no owner expectations; of changes: those")
    print("    of them that change an output")
    print("  +owner: killed once the owner's expectations are added")
    print("  +proposals: killed by the mutation-aware tests (the owner's expectations and each")
    print("    survivor's proposal as a scenario); surviving / equiv: after those")
    print()
    print("still surviving the standard suite:")
    for name, d in domains.items():
        for r in d["mutants"]:
            if r["changes_output"] and r["standard"]["status"] != KILLED:
                after = r["aware"]["status"]
                by_owner = r["owner"]["status"]
                print(f"  {name}: {r['key']} (owner's expectations: {by_owner}, "
                      f"mutation-aware tests: {after})")  # fmt: skip
    print()
    harmless = [(name, h) for name, d in domains.items() for h in d["harmless"]]
    flagged = [(name, h) for name, h in harmless if h["flagged"]]
    print(f"harmless edits: {len(harmless)}, flagged {len(flagged)}, changing an output "
          f"{sum(1 for _, h in harmless if h['changes_output'])}")  # fmt: skip
    for name, h in flagged:
        scenarios: dict[str, list[str]] = {}
        for scenario, *flag in h["new_flags"]:
            scenarios.setdefault(" / ".join(flag), []).append(scenario)
        what = [f"{flag} (on {len(names)} scenarios)" for flag, names in scenarios.items()]
        print(f"  FLAGGED {name}: {h['name']}: {'; '.join(what + h['new_catalogue_problems'])}")
    head = totals["headline"]
    share = head["share_flagged_by_standard_suite"]
    aware = head["share_killed_by_mutation_aware_tests"]
    print()
    print(f"standard suite flags {head['flagged_by_standard_suite']} of "
          f"{head['changing_an_output']} mistakes that change an output "
          f"({_pct(share)}; target at least {SCORE_TARGET:.0%})")  # fmt: skip
    print(
        f"with the owners' expectations {head['killed_with_owner_expectations']} of them are "
        f"killed; ",
        end="",
    )
    print(f"mutation-aware tests kill {head['killed_by_mutation_aware_tests']} "
          f"({_pct(aware)}); {head['flagged_without_changing_an_output']} further mistakes "
          f"flagged that change no output")  # fmt: skip
    print(f"harmless edits flagged: {head['harmless_edits_flagged']} of {head['harmless_edits']} "
          f"(target 0)")  # fmt: skip


def _pct(share: float | None) -> str:
    return "n/a" if share is None else f"{share:.0%}"


# --------------------------------------------------------------------------- the demo


def demo_timing(repeat: int, log: Callable[[str], None]) -> dict[str, Any]:
    """`--mutate` on the demo's Atlas contract and stories, against the standard review of the
    same stories (what `test` without `--mutate` does), interleaved, medians."""
    with tempfile.TemporaryDirectory(prefix="mutation-bench-") as directory:
        sys.path.insert(0, str(ROOT / "bench"))
        from sweep import bare_documents, build_suite, setup_django

        setup_django(directory)
        from contracts.models import SourceClass
        from scenarios import demo
        from scenarios.models import Scenario
        from scenarios.services import weak_classes

        stories = [s for s in demo.SCENARIOS if s.decision_type == demo.ATLAS_KEY]
        _, version = build_suite(len(stories))
        documents = [load_input(d) for d in bare_documents(version)]
        scenarios = Scenario.objects.filter(decision_type=version.decision_type)
        expected = [s.expected_slots for s in scenarios.order_by("position")]
        weak = tuple(weak_classes())
        catalogue = {c.key: c.authority_tier for c in SourceClass.objects.all()}
    contract = documents[0].contract
    cases = [MutationCase(f"story-{i}", d, {"slots": e} if e else None)
             for i, (d, e) in enumerate(zip(documents, expected, strict=True))]  # fmt: skip
    domain = Domain("demo", contract, (), tuple(cases))

    def plain() -> None:
        for case in cases:
            review.run_sweep(case.document, weak, catalogue, compile_input)

    def mutate() -> MutationReport:
        return run_mutation(contract, cases, catalogue=catalogue, weak_classes=weak)

    count = len(mutants(contract, catalogue=catalogue, weak_classes=weak, corpus=domain.corpus()))
    log(f"demo: {len(cases)} stories, {count} mutants")
    plain_times, mutate_times, report = [], [], None
    for attempt in range(repeat):
        steps = [("plain", plain_times), ("mutate", mutate_times)]
        for which, times in steps if attempt % 2 == 0 else reversed(steps):
            started = time.perf_counter()
            result = plain() if which == "plain" else mutate()
            times.append(time.perf_counter() - started)
            report = result if result is not None else report
    assert report is not None
    plain_s, mutate_s = statistics.median(plain_times), statistics.median(mutate_times)
    return {"stories": len(cases), "repeat": repeat, "standard_review_seconds": plain_s,
            "mutate_seconds": mutate_s, "ratio": mutate_s / plain_s,
            "target_seconds": DEMO_TARGET_SECONDS, "score": report.score,
            "totals": report.to_json()["totals"]}  # fmt: skip


# --------------------------------------------------------------------------- main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the whole report as JSON")
    parser.add_argument("--domain", action="append", help="only this domain (repeatable)")
    parser.add_argument(
        "--demo",
        action="store_true",
        help="also time --mutate on the demo's Atlas stories (needs Django)",
    )
    parser.add_argument("--repeat", type=int, default=3, help="attempts for the demo's timing")
    options = parser.parse_args()
    names = options.domain or sorted(HARMLESS)
    unknown = sorted(set(names) - set(HARMLESS))
    if unknown:
        parser.error(f"no domain {', '.join(unknown)}; there are {', '.join(sorted(HARMLESS))}")

    began = time.perf_counter()

    def log(message: str) -> None:
        print(f"[{time.perf_counter() - began:6.1f} s] {message}", file=sys.stderr, flush=True)

    domains = {name: measure_domain(load_domain(DOMAINS / name), log) for name in names}
    totals = tally(domains)
    demo = demo_timing(options.repeat, log) if options.demo else None
    if options.json:
        print(json.dumps({"domains": domains, **totals, "demo": demo}, indent=2))
    else:
        print_figures(domains, totals)
        if demo is not None:
            print(f"demo ({demo['stories']} Atlas stories, median of {demo['repeat']}): "
                  f"--mutate {demo['mutate_seconds']:.2f} s against the standard review "
                  f"{demo['standard_review_seconds']:.2f} s (x{demo['ratio']:.1f}; target at "
                  f"most {DEMO_TARGET_SECONDS:.0f} s), score {_pct(demo['score'])}")  # fmt: skip
    head = totals["headline"]
    share = head["share_flagged_by_standard_suite"]
    met = (share is None or share >= SCORE_TARGET) and head["harmless_edits_flagged"] == 0
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
