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
| hide                | one candidate is removed; what depends on it stays, blocked    |
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
and judged, in `compiler._relations`.

`standard_suite` derives the suite the workbench runs for every scenario.

The package keeps one concern per module: `operators` (the functions and `OPERATORS`),
`arguments` (each operator's checked arguments and `Perturbation`), `suite` (the suites a
scenario derives) and `flips` (slot states and flips). `compiler._sweep`, above this package
and `_relations`, compiles and judges the variants. The public names are `compiler`'s.
"""
