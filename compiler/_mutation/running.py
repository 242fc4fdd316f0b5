"""`run_mutation`: every mutant against the scenarios, killed, surviving or equivalent.

For each scenario the original contract's sweep is compiled once: its base, its standard
variants and their outputs, its review flags. A mutant is then tried in the cheapest order and
dropped as soon as it is killed:

1. the catalogue check (no compile): an accepted class the catalogue lacks;
2. each scenario's standard sweep under the mutant: a review flag the original does not raise;
3. the owner's expectations (format 1) that hold for the original and fail for the mutant;
4. the mutant compiled on the original's own inputs (each base and standard variant): the
   first input where it gives another pinnable output is the scenario to propose; when none
   differs at all, the mutant is equivalent on this suite. Inputs aimed at the mistake
   (`probes`) are tried last, for a proposal only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from compiler._input import CompileInput, Contract
from compiler._mutation import review
from compiler._mutation.kinds import MUTATION_KINDS, Mutant, advice
from compiler._mutation.kinds import mutants as all_mutants
from compiler._mutation.probes import probes
from compiler._output import CompileOutput
from compiler._perturb.arguments import Perturbation
from compiler._perturb.flips import admitted_in, slot_states

KILLED, SURVIVING, EQUIVALENT = "killed", "surviving", "equivalent"
STANDARD, EXPECTATIONS = "standard", "expectations"
# What a proposal can pin (format 1), in the order a difference is described.
PINNABLE = ("slots", "decision_ready", "blocking", "required", "resource_ids", "admitted")
MAX_REASONS = 3


@dataclass(frozen=True)
class MutationCase:
    """One scenario: its compile input (the contract inside) and the owner's expectations
    (format 1), of the base and, optionally, of single perturbations of it."""

    name: str
    document: CompileInput
    expected: Mapping[str, Any] | None = None
    variants: Sequence[tuple[Perturbation, Mapping[str, Any]]] = ()


@dataclass
class MutantResult:
    mutant: Mutant
    status: str
    killed_by: str | None = None
    reasons: list[str] = field(default_factory=list)
    advice: str = ""
    proposal: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {**self.mutant.to_json(), "status": self.status, "killed_by": self.killed_by,
                "reasons": self.reasons, "advice": self.advice,
                "proposal": self.proposal}  # fmt: skip


@dataclass
class MutationReport:
    results: list[MutantResult]

    @property
    def score(self) -> float | None:
        killed = sum(1 for r in self.results if r.status == KILLED)
        scored = killed + sum(1 for r in self.results if r.status == SURVIVING)
        return killed / scored if scored else None

    def to_json(self) -> dict[str, Any]:
        def tally(results: Sequence[MutantResult]) -> dict[str, int]:
            counts = {"mutants": len(results), KILLED: 0, SURVIVING: 0, EQUIVALENT: 0}
            for r in results:
                counts[r.status] += 1
            return counts

        by_kind = {
            kind: tally([r for r in self.results if r.mutant.kind == kind])
            for kind in MUTATION_KINDS
            if any(r.mutant.kind == kind for r in self.results)
        }
        return {
            "score": self.score,
            "totals": {**tally(self.results), "by_kind": by_kind},
            "mutants": [r.to_json() for r in self.results],
        }


def observed(output: CompileOutput, document: CompileInput) -> dict[str, Any]:
    """What an owner can pin of one output (format 1), and its packet."""
    return {
        "slots": slot_states(output, document),
        "decision_ready": output.decision_ready,
        "blocking": sorted(output.blocking),
        "required": {s.proposition: s.required for s in output.slots},
        "resource_ids": {s.proposition: list(s.resource_ids) for s in output.slots},
        "admitted": sorted(admitted_in(output)),
        "packet": list(output.packet_ids),
    }


@dataclass
class _Input:
    """One input of the original's suite: a scenario's base or one of its variants."""

    case: MutationCase
    perturbation: Perturbation | None
    document: CompileInput
    seen: dict[str, Any]  # the original's `observed`
    label: str | None = None  # an aimed input's (`probes`); a variant's comes from its operator


@dataclass
class _Original:
    case: MutationCase
    document: CompileInput
    output: CompileOutput
    flags: dict[review.FlagKey, str]
    inputs: list[_Input]
    # each owner expectation of a variant, with the failures the contract itself has on it
    variants: list[tuple[Perturbation, Mapping[str, Any], set[tuple[str, Any]]]]


def run_mutation(
    contract: Contract,
    cases: Sequence[MutationCase],
    *,
    catalogue: Mapping[str, int] | None = None,
    weak_classes: Sequence[str] = (),
    mutants: Sequence[Mutant] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> MutationReport:
    """Every mutant of `contract` (or the ones given) run against `cases`; see the module."""
    from compiler._pipeline import compile_input

    catalogue = dict(catalogue or {})
    weak = tuple(dict.fromkeys(weak_classes))
    if mutants is None:
        corpus = [c for case in cases for c in case.document.candidates]
        mutants = all_mutants(contract, catalogue=catalogue, weak_classes=weak, corpus=corpus)
    originals = [_original(case, contract, weak, catalogue) for case in cases]
    known_problems = set(review.catalogue_problems(contract, catalogue))
    results = []
    for done, mutant in enumerate(mutants, start=1):
        results.append(_try(mutant, originals, weak, catalogue, known_problems, compile_input))
        if progress is not None:
            progress(done, len(mutants))
    return MutationReport(results)


def _original(
    case: MutationCase, contract: Contract, weak: tuple[str, ...], catalogue: Mapping[str, int]
) -> _Original:
    from compiler._pipeline import compile_input

    document = case.document.model_copy(update={"contract": contract})
    compiled: list[tuple[CompileInput, CompileOutput]] = []

    def recorded(given: CompileInput) -> CompileOutput:
        output = compile_input(given)
        compiled.append((given, output))
        return output

    report = review.run_sweep(document, weak, catalogue, recorded)
    (_, base), variants = compiled[0], compiled[1:]
    inputs = [_Input(case, None, document, observed(base, document))]
    for row, (variant_input, output) in zip(report["perturbations"], variants, strict=True):
        perturbation = Perturbation(row["operator"], row["args"])
        inputs.append(_Input(case, perturbation, variant_input, observed(output, document)))
    pinned = []
    for perturbation, expected in case.variants:
        variant_input = perturbation.apply(document)
        failing = _failing(compile_input(variant_input), variant_input, expected)
        pinned.append((perturbation, expected, failing))
    return _Original(case, document, base, review.flags(report), inputs, pinned)


def _try(
    mutant: Mutant,
    originals: Sequence[_Original],
    weak: tuple[str, ...],
    catalogue: Mapping[str, int],
    known_problems: set[str],
    compile_fn: Callable[[CompileInput], CompileOutput],
) -> MutantResult:
    problems = [
        p for p in review.catalogue_problems(mutant.contract, catalogue) if p not in known_problems
    ]
    if problems:
        return MutantResult(mutant, KILLED, STANDARD, [f"catalogue: {p}" for p in problems])
    bases: list[tuple[_Original, CompileInput, CompileOutput]] = []
    for original in originals:
        document = original.document.model_copy(update={"contract": mutant.contract})
        compiled: list[CompileOutput] = []

        def recorded(given: CompileInput, compiled: list[CompileOutput] = compiled):
            output = compile_fn(given)
            compiled.append(output)
            return output

        report = review.run_sweep(document, weak, catalogue, recorded)
        new = [m for f, m in review.flags(report).items() if f not in original.flags]
        if new:
            reasons = [f"{original.case.name}: {message}" for message in new[:MAX_REASONS]]
            return MutantResult(mutant, KILLED, STANDARD, reasons)
        bases.append((original, document, compiled[0]))
    reasons = [
        reason
        for original, document, output in bases
        for reason in _broken_expectations(original, document, output, compile_fn)
    ]
    if reasons:
        return MutantResult(mutant, KILLED, EXPECTATIONS, reasons[:MAX_REASONS])
    return _unnoticed(mutant, originals, compile_fn)


def _broken_expectations(
    original: _Original,
    document: CompileInput,
    output: CompileOutput,
    compile_fn: Callable[[CompileInput], CompileOutput],
) -> list[str]:
    """The owner's expectations of a scenario (its base's, then its variants') that hold for
    the original and fail for the mutant (`document`, `output`: its base)."""
    case = original.case
    reasons = []
    if case.expected:
        held = _failing(original.output, original.document, case.expected)
        reasons += [f"{case.name}: {_failure(f)}"
                    for f in _failures(output, document, case.expected)
                    if (f["what"], f["key"]) not in held]  # fmt: skip
    for perturbation, expected, held in original.variants:
        where = f"{case.name}, {perturbation.name}"
        try:
            variant_input = perturbation.apply(document)
        except ValueError as exc:  # the mutant lacks what the perturbation names
            reasons.append(f"{where}: cannot be run against the mistake ({exc})")
            continue
        reasons += [f"{where}: {_failure(f)}"
                    for f in _failures(compile_fn(variant_input), variant_input, expected)
                    if (f["what"], f["key"]) not in held]  # fmt: skip
    return reasons


def _failures(
    output: CompileOutput, document: CompileInput, expected: Mapping[str, Any]
) -> list[dict[str, Any]]:
    from compiler._relations.expectations import output_failures

    return output_failures(output, document, expected)


def _failing(
    output: CompileOutput, document: CompileInput, expected: Mapping[str, Any]
) -> set[tuple[str, Any]]:
    return {(f["what"], f["key"]) for f in _failures(output, document, expected)}


def _failure(failure: Mapping[str, Any]) -> str:
    return (
        f"expected {_what(failure)} {_shown(failure['expected'])}, got {_shown(failure['actual'])}"
    )


def _what(failure: Mapping[str, Any]) -> str:
    return failure["what"] + (f" {failure['key']}" if failure.get("key") else "")


def _shown(value: Any) -> str:
    if isinstance(value, list | tuple | set):
        return "[" + ", ".join(map(str, value)) + "]"
    return str(value)


def _unnoticed(
    mutant: Mutant,
    originals: Sequence[_Original],
    compile_fn: Callable[[CompileInput], CompileOutput],
) -> MutantResult:
    """A mutant no check noticed: surviving when some output of the suite differs,
    equivalent when none does; with the first input that would notice it, as a proposal."""
    differs = False
    proposal = None
    for original in originals:
        for given in original.inputs:
            document = given.document.model_copy(update={"contract": mutant.contract})
            seen = observed(compile_fn(document), document)
            if seen == given.seen:
                continue
            differs = True
            proposal = _proposal(mutant, given, seen)
            if proposal is not None:
                break
        if proposal is not None:
            break
    if proposal is None:
        for original in originals:
            for label, aimed in probes(mutant, original.document):
                given = _Input(original.case, None, aimed, observed(compile_fn(aimed), aimed),
                               label)  # fmt: skip
                document = aimed.model_copy(update={"contract": mutant.contract})
                proposal = _proposal(mutant, given, observed(compile_fn(document), document))
                if proposal is not None:
                    break
            if proposal is not None:
                break
    return MutantResult(mutant, SURVIVING if differs else EQUIVALENT,
                        advice=advice(mutant), proposal=proposal)  # fmt: skip


def _proposal(mutant: Mutant, given: _Input, seen: Mapping[str, Any]) -> dict[str, Any] | None:
    """The scenario `given` with the original's output pinned where the mutant's differs
    (and its slots), or None when nothing pinnable differs."""
    original = given.seen
    differing = [what for what in PINNABLE if original[what] != seen[what]]
    expected: dict[str, Any] = {"slots": original["slots"]}
    compiled = set(original["slots"].values()) != {"refused"}
    for what in differing:
        if what in ("required", "resource_ids"):
            pinned = {k: v for k, v in original[what].items() if seen[what].get(k) != v}
            if pinned:
                expected[what] = pinned
        elif what != "slots" and compiled:
            expected[what] = original[what]
    if set(expected) == {"slots"} and "slots" not in differing:
        return None
    case = given.case
    document = given.document
    own = (document.candidates == case.document.candidates
           and document.directory == case.document.directory)  # fmt: skip
    shown = _label(given)
    where = case.name if shown is None else f"{case.name} ({shown})"
    changed = ", ".join(w for w in PINNABLE if w in expected and (w != "slots" or w in differing))
    return {
        "name": f"{case.name}-{mutant.key.replace(':', '-').replace('_', '-')}",
        "description": f"Notices the mistake where {mutant.description}: on {where}, the "
        f"contract and the mistake differ in {changed}.",
        "request": document.request.model_dump(mode="json", exclude_defaults=True),
        "directory": document.directory.model_dump(mode="json", exclude_defaults=True),
        "candidates": [
            c.model_dump(mode="json", exclude_defaults=True) for c in document.candidates
        ],
        "based_on": where,
        "pool_from": case.name if own else None,
        "expected": expected,
    }


def _label(given: _Input) -> str | None:
    from compiler._relations.registry import label

    if given.perturbation is None:
        return given.label
    return label(given.perturbation, given.case.document)
