"""Mutation testing of contracts: does a contract's test suite notice the mistakes owners make?

`mutants(contract, ...)` applies every kind of `MUTATION_KINDS` to a contract (a weak class
accepted, a required proposition made optional, precedence reversed, ...), one `Mutant` per
proposition (and class) where it applies. `run_mutation(contract, cases, ...)` runs each
mutant against the scenarios (`MutationCase`): it is killed by the standard review (a review
flag or a catalogue problem the contract does not raise) or by the owner's expectations,
equivalent when it changes no output of the suite, and surviving otherwise, with advice in
plain words and, where one is found, the scenario that would kill it (a proposal). The score
is killed / (killed + surviving).

Pure: no clock, no randomness, no I/O. The package keeps one concern per module: `kinds` (the
mistakes, as data), `probes` (inputs aimed at one mistake), `review` (what the standard
review shows) and `running`.
"""
