"""Relations: what each perturbation must and must not change, and the verdicts that judge it.

Every operator of `compiler._perturb` has one `Relation`, kept here as data: a plain-language label
for a perturbation of it ("one day later", "facility-F102 (facility record) hidden"), what the
operator does, the relation it must keep, how a result is judged, and the judge itself.

`judge(base, variant, perturbation, context)` gives one `Verdict` for every proposition of the
contract, flipped or not, and one more for each fault of the variant as a whole (an admitted
item that must not be, a compile that should have been refused):

* `violation` — the relation is broken: the contract or the compiler is wrong;
* `finding` — allowed, but a reviewer should know (a slot resting on a single source, a
  decision that changes within a day and the items that cause it);
* `expected` — the perturbation's documented consequence, or nothing changed.

`VariantExpectation` is an owner's expectation on one perturbation of one scenario, checked by
`slot_failures`, the same code that checks a base's expected slots. `corpus_findings` reads a
contract against its corpus, without compiling. docs/verdicts.md has the table of relations.
Pure: no clock, no randomness, no I/O.

The package keeps one concern per module: `verdicts` (`Verdict`, `Context`, `Case`,
`Relation`), `labels`, `judges`, `registry` (`RELATIONS` and `judge`), `expectations` and
`corpus`, `probes` (the judges of the contract probes) and `flags` (`review_flags`,
`catalogue_problems`). The public names are `compiler`'s.
"""
