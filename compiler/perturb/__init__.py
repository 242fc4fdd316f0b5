"""Perturbations: pure functions from one compile input to a variant, and the flips between
two compilations.

Each operator changes one predicate and nothing else, so a flipped slot names its cause:

| operator            | what changes                                                   |
| ------------------- | -------------------------------------------------------------- |
| swap_principal      | the caller (and the delegation it is acting for)               |
| shift_days          | the decision date                                              |
| supersede           | one candidate is marked superseded                             |
| substitute_class    | one candidate's evidence class                                 |
| revoke_delegation   | the request's delegation is revoked                            |
| contaminate         | n high-relevance items that must fail admission are added      |
| hide                | one candidate is removed (with what cannot travel without it)  |
| contradict          | an admissible, accepted-class item contradicting a proposition |
| promote_weak        | per proposition, an item of each weak class claiming approval  |
| look_alike          | a superseded, expired and other-entity copy of admitted support |
| contradict_first    | per proposition, a contradiction of its first accepted class   |
| swap_entity         | the same request about another entity                          |
| replay_expiry       | the decision date moved to the day after the plan's valid_until |

and the contract probes (`probes`), which ask what the contract itself says:

| operator            | what changes                                                   |
| ------------------- | -------------------------------------------------------------- |
| precedence          | one supporter of each accepted class, later classes more relevant |
| swap_purpose        | the request's purpose                                          |
| promote_classes     | per proposition, an item of each listed class claiming approval |
| contradict_classes  | per proposition, a contradiction of one named class            |
| remove_support      | every item supporting a proposition is removed                 |
| crowd               | duplicates and low-relevance copies of the supporters are added |

Items the operators add carry ids that say so (`contaminant-…`, `contradiction-…`,
`weak-promotion:…`, `look-alike:…`). What each operator must and must not change is stated,
and judged, in `compiler.relations`.

`standard_suite` derives the suite the workbench runs for every scenario.

The package keeps one concern per module: `operators` (the functions and `OPERATORS`),
`arguments` (each operator's checked arguments and `Perturbation`), `suite` (the suites a
scenario derives) and `flips` (slot states, flips and `sweep`). Everything public is
importable from `compiler.perturb` itself, as it was when this was one module.
"""

from __future__ import annotations

from compiler.codes import Requirement

from compiler.perturb.arguments import OPERATORS, ContaminateArgs, ContradictArgs, ContradictFirstArgs, HideArgs, LookAlikeArgs, Name, Perturbation, PerturbationArgs, PromoteWeakArgs, ReplayExpiryArgs, RevokeDelegationArgs, ShiftDaysArgs, SubstituteClassArgs, SupersedeArgs, SwapEntityArgs, SwapPrincipalArgs
from compiler.perturb.flips import REFUSED, admitted_in, flips, slot_states, sweep
from compiler.perturb.operators import APPROVAL_WORDING, CONTAMINANT_PREFIX, LOOK_ALIKE_KINDS, LOOK_ALIKE_PREFIX, WEAK_PROMOTION_PREFIX, contaminate, contradict, contradict_first, hide, look_alike, promote_weak, replay_expiry, revoke_delegation, shift_days, substitute_class, supersede, swap_entity, swap_principal
from compiler.perturb.probes import CONTRADICTION_PREFIX, CROWD_PREFIX, LOW_RELEVANCE, PRECEDENCE_PREFIX, PROBE_OPERATORS, PROMOTION_PREFIX, contradict_classes, crowd, precedence, promote_classes, remove_support, swap_purpose
from compiler.perturb.suite import CONTAMINATION_SIZE, OUTSIDER_PRINCIPAL, boundary_suite, standard_suite

__all__ = [
    "OPERATORS",
    "Perturbation",
    "Requirement",
    "boundary_suite",
    "contaminate",
    "contradict",
    "contradict_first",
    "flips",
    "look_alike",
    "promote_weak",
    "replay_expiry",
    "swap_entity",
    "hide",
    "revoke_delegation",
    "shift_days",
    "standard_suite",
    "substitute_class",
    "supersede",
    "swap_principal",
    "sweep",
]
