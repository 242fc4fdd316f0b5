"""Contract tests as files, and `evidence-compiler test DIR|BUNDLE`.

A test directory holds one decision type's contract and its scenarios, reviewable in a pull
request (docs/distribution.md has the format and an example)::

    DIR/contract.yaml        ContractFile: the contract, optionally its source classes
    DIR/corpora/NAME.yaml    CorpusFile: a fixture corpus (directory, candidates)
    DIR/scenarios/NAME.yaml  ScenarioFile: a request, a corpus (by name or inline), the
                             expected slot states (and admitted / rejected ids), optional
                             expectations for single perturbations

Each file may be `.yaml`/`.yml` (needs PyYAML: `pip install 'evidence-compiler[yaml]'`) or
`.json` (standard library only). `schema --tests` prints the JSON Schema of the three files.

`run_tests` compiles every scenario, checks its expectations, runs the standard perturbation
suite (`compiler.standard_suite`) plus the perturbations a scenario names, and judges
each variant in one place (`judge_variant`). `mutate` runs mutation testing
(`compiler._mutation`) over the same scenarios, for `test --mutate`.

Exit codes: 0 every expectation holds, 1 a
failure, 2 invalid files (every problem listed with its file and location). JUnit XML has one
testsuite per scenario and one testcase per expectation and per perturbation.

`baseline_widenings` (`test DIR --baseline OLD`) lists every widening of the contract against
an older one read from a bundle, a test directory or a contract file (`load_baseline`).

Reads files (the CLI layer), never the network or a clock.

The package keeps one concern per module: `files` (the file format), `loading`, `running`,
`reporting`, `baseline` and `mutation`. The public names are `compiler_tools`'.
"""
