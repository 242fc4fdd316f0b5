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
suite (`compiler.perturb.standard_suite`) plus the perturbations a scenario names, and judges
each variant in one place (`judge_variant`). `mutate` runs mutation testing
(`compiler.mutation`) over the same scenarios, for `test --mutate`.

Exit codes: 0 every expectation holds, 1 a
failure, 2 invalid files (every problem listed with its file and location). JUnit XML has one
testsuite per scenario and one testcase per expectation and per perturbation.

`baseline_widenings` (`test DIR --baseline OLD`) lists every widening of the contract against
an older one read from a bundle, a test directory or a contract file (`load_baseline`).

Reads files (the CLI layer), never the network or a clock.

The package keeps one concern per module: `files` (the file format), `loading`, `running`,
`reporting`, `baseline` and `mutation`. Everything public is importable from
`compiler.contract_tests` itself, as it was when this was one module.
"""

from __future__ import annotations

from compiler.contract_tests.baseline import Widenings, baseline_widenings, load_baseline
from compiler.contract_tests.files import CONTRACT_FILE, FORMAT, NEEDS_YAML, SUFFIXES, ContractFile, CorpusFile, Expected, ExpectedState, PerturbationSpec, ScenarioFile, SourceClassEntry, VariantExpectation, file_schemas
from compiler.contract_tests.loading import Case, ContractTests, InvalidTestFiles, bundle_tests, load_tests, read_document, unsigned_bundle_tests
from compiler.contract_tests.mutation import mutate, mutation_cases, mutation_junit_xml, mutation_text, score_text
from compiler.contract_tests.reporting import junit_xml, summary_text
from compiler.contract_tests.running import Check, Report, ScenarioReport, expectation_failures, failing_expectations, judge_variant, run_tests

__all__ = [
    "FORMAT",
    "ContractFile",
    "CorpusFile",
    "Expected",
    "Report",
    "Widenings",
    "ScenarioFile",
    "InvalidTestFiles",
    "ContractTests",
    "baseline_widenings",
    "bundle_tests",
    "failing_expectations",
    "unsigned_bundle_tests",
    "judge_variant",
    "junit_xml",
    "load_baseline",
    "load_tests",
    "mutate",
    "mutation_cases",
    "mutation_junit_xml",
    "mutation_text",
    "score_text",
    "run_tests",
    "summary_text",
    "file_schemas",
]
