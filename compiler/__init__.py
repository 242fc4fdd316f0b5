"""The context compiler's engine: a pure, deterministic library.

    from compiler import CompileInput, compile_input
    out = compile_input(CompileInput.model_validate(doc))

It imports no Django and reads no clock, network, file or random source: signing and trust
are `compiler_trust`, the command line and the files it reads are `compiler_tools`. Every
public name is here; the modules behind them are private. The names load when first used, so
`python -m compiler_tools compile` imports only what a compile needs (no pydantic for valid
input: see `compiler._slotted_reader`). `pushdown` is the predicate-pushdown API as a
namespace of its own (docs/pushdown.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from compiler._lazy import lazy_surface
from compiler.version import COMPILER_VERSION

if TYPE_CHECKING:
    from compiler import _pushdown as pushdown
    from compiler._canonical import canonical_bytes, sha256_hex
    from compiler._codes import (
        ALL_ENTITIES,
        Detail,
        OrderRole,
        Outcome,
        Pass,
        Reason,
        RefusalReason,
        Requirement,
        Result,
        SlotReason,
        SlotState,
    )
    from compiler._compare import admitted_ids, compare
    from compiler._compiled import contract_sha256
    from compiler._cross_checks import cross_reference_problems
    from compiler._errors import InvalidInput, Refused
    from compiler._input import (
        Candidate,
        CompileInput,
        Contract,
        Delegation,
        Directory,
        Form,
        Policy,
        Proposition,
        Request,
    )
    from compiler._json_reader import parse_json
    from compiler._mutation.kinds import MUTATION_KINDS, Mutant, mutants
    from compiler._mutation.running import (
        EQUIVALENT,
        KILLED,
        SURVIVING,
        MutantResult,
        MutationCase,
        MutationReport,
        observed,
        run_mutation,
    )
    from compiler._output import CompileOutput, PacketItem, Slot
    from compiler._output_json import output_json_text
    from compiler._perturb.arguments import OPERATORS, Perturbation
    from compiler._perturb.flips import REFUSED, admitted_in, flips, slot_states
    from compiler._perturb.operators import (
        contaminate,
        contradict,
        hide,
        revoke_delegation,
        shift_days,
        substitute_class,
        supersede,
        swap_principal,
    )
    from compiler._perturb.probes import PROBE_OPERATORS
    from compiler._perturb.suite import CONTAMINATION_SIZE, standard_suite
    from compiler._pipeline import compile_input
    from compiler._relations.corpus import corpus_findings, purpose_findings
    from compiler._relations.expectations import VariantExpectation, output_failures, slot_failures
    from compiler._relations.flags import catalogue_problems, review_flags
    from compiler._relations.registry import RELATIONS, judge, label
    from compiler._relations.verdicts import EXPECTED, FINDING, VIOLATION, Context, Verdict, worst
    from compiler._sweep import sweep
    from compiler._validate_input import load_input
    from compiler._widenings import WIDENING_KINDS, Widening, contract_widenings

_HOMES = {
    "compiler._codes": [
        "ALL_ENTITIES",
        "Detail",
        "OrderRole",
        "Outcome",
        "Pass",
        "Reason",
        "RefusalReason",
        "Requirement",
        "Result",
        "SlotReason",
        "SlotState",
    ],
    "compiler._errors": ["InvalidInput", "Refused"],
    "compiler._input": [
        "Candidate",
        "CompileInput",
        "Contract",
        "Delegation",
        "Directory",
        "Form",
        "Policy",
        "Proposition",
        "Request",
    ],
    "compiler._output": ["CompileOutput", "PacketItem", "Slot"],
    "compiler._validate_input": ["load_input"],
    "compiler._pipeline": ["compile_input"],
    "compiler._json_reader": ["parse_json"],
    "compiler._cross_checks": ["cross_reference_problems"],
    "compiler._compiled": ["contract_sha256"],
    "compiler._output_json": ["output_json_text"],
    "compiler._canonical": ["canonical_bytes", "sha256_hex"],
    "compiler._widenings": ["WIDENING_KINDS", "Widening", "contract_widenings"],
    "compiler._compare": ["admitted_ids", "compare"],
    "compiler._perturb.arguments": ["OPERATORS", "Perturbation"],
    "compiler._perturb.operators": [
        "contaminate",
        "contradict",
        "hide",
        "revoke_delegation",
        "shift_days",
        "substitute_class",
        "supersede",
        "swap_principal",
    ],
    "compiler._perturb.probes": ["PROBE_OPERATORS"],
    "compiler._perturb.suite": ["CONTAMINATION_SIZE", "standard_suite"],
    "compiler._perturb.flips": ["REFUSED", "admitted_in", "flips", "slot_states"],
    "compiler._sweep": ["sweep"],
    "compiler._relations.verdicts": [
        "EXPECTED",
        "FINDING",
        "VIOLATION",
        "Context",
        "Verdict",
        "worst",
    ],
    "compiler._relations.registry": ["RELATIONS", "judge", "label"],
    "compiler._relations.expectations": ["VariantExpectation", "output_failures", "slot_failures"],
    "compiler._relations.flags": ["catalogue_problems", "review_flags"],
    "compiler._relations.corpus": ["corpus_findings", "purpose_findings"],
    "compiler._mutation.kinds": ["MUTATION_KINDS", "Mutant", "mutants"],
    "compiler._mutation.running": [
        "EQUIVALENT",
        "KILLED",
        "MutantResult",
        "MutationCase",
        "MutationReport",
        "SURVIVING",
        "observed",
        "run_mutation",
    ],
}
_NAMESPACES = {"pushdown": "compiler._pushdown"}
__getattr__ = lazy_surface(__name__, _HOMES, _NAMESPACES)

__all__ = [
    "ALL_ENTITIES",
    "COMPILER_VERSION",
    "CONTAMINATION_SIZE",
    "Candidate",
    "CompileInput",
    "CompileOutput",
    "Context",
    "Contract",
    "Delegation",
    "Detail",
    "Directory",
    "EQUIVALENT",
    "EXPECTED",
    "FINDING",
    "Form",
    "InvalidInput",
    "KILLED",
    "MUTATION_KINDS",
    "Mutant",
    "MutantResult",
    "MutationCase",
    "MutationReport",
    "OPERATORS",
    "OrderRole",
    "Outcome",
    "PROBE_OPERATORS",
    "PacketItem",
    "Pass",
    "Perturbation",
    "Policy",
    "Proposition",
    "REFUSED",
    "RELATIONS",
    "Reason",
    "RefusalReason",
    "Refused",
    "Request",
    "Requirement",
    "Result",
    "SURVIVING",
    "Slot",
    "SlotReason",
    "SlotState",
    "VIOLATION",
    "VariantExpectation",
    "Verdict",
    "WIDENING_KINDS",
    "Widening",
    "admitted_ids",
    "admitted_in",
    "canonical_bytes",
    "catalogue_problems",
    "compare",
    "compile_input",
    "contaminate",
    "contract_sha256",
    "contract_widenings",
    "contradict",
    "corpus_findings",
    "cross_reference_problems",
    "flips",
    "hide",
    "judge",
    "label",
    "load_input",
    "mutants",
    "observed",
    "output_failures",
    "output_json_text",
    "parse_json",
    "purpose_findings",
    "pushdown",
    "review_flags",
    "revoke_delegation",
    "run_mutation",
    "sha256_hex",
    "shift_days",
    "slot_failures",
    "slot_states",
    "standard_suite",
    "substitute_class",
    "supersede",
    "swap_principal",
    "sweep",
    "worst",
]
