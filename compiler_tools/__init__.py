"""The context compiler's tools: the `evidence-compiler` command line (`python -m
compiler_tools`: compile, compare, sweep, schema, keys, verify-bundle, pull, serve, test),
the runtime API a service embeds (`BundleStore`, `decide`), contract test directories, and
reading untrusted YAML.

    from compiler_tools import BundleStore, decide, load_tests, run_tests

These are the parts that touch files, stdin/stdout, exit codes and (`pull`) the network,
above the engine (`compiler`) and trust (`compiler_trust`). Every public name is here; the
modules behind them are private and load when one of their names is first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from compiler._lazy import lazy_surface

if TYPE_CHECKING:
    from compiler_tools._cli import main
    from compiler_tools._contract_tests.files import (
        FORMAT,
        NEEDS_YAML,
        ContractFile,
        CorpusFile,
        ScenarioFile,
        SourceClassEntry,
        file_schemas,
        read_document,
    )
    from compiler_tools._contract_tests.loading import (
        InvalidTestFiles,
        load_tests,
        unsigned_bundle_tests,
    )
    from compiler_tools._contract_tests.mutation import mutation_cases
    from compiler_tools._contract_tests.running import failing_expectations, run_tests
    from compiler_tools._pull import BUNDLE_FILE, STATE_FILE
    from compiler_tools._pull_io import ETAG_FILE
    from compiler_tools._pull_tests import TESTS_FILE
    from compiler_tools._runtime import (
        BundleStore,
        Decision,
        NoBundle,
        bundle_age,
        decide,
        decision_input,
    )
    from compiler_tools._untrusted_yaml import parse_yaml

_HOMES = {
    "compiler_tools._cli": ["main"],
    "compiler_tools._pull": ["BUNDLE_FILE", "STATE_FILE"],
    "compiler_tools._pull_io": ["ETAG_FILE"],
    "compiler_tools._pull_tests": ["TESTS_FILE"],
    "compiler_tools._runtime": [
        "BundleStore",
        "Decision",
        "NoBundle",
        "bundle_age",
        "decide",
        "decision_input",
    ],
    "compiler_tools._contract_tests.files": [
        "ContractFile",
        "CorpusFile",
        "FORMAT",
        "NEEDS_YAML",
        "ScenarioFile",
        "SourceClassEntry",
        "file_schemas",
        "read_document",
    ],
    "compiler_tools._contract_tests.loading": [
        "InvalidTestFiles",
        "load_tests",
        "unsigned_bundle_tests",
    ],
    "compiler_tools._contract_tests.running": ["failing_expectations", "run_tests"],
    "compiler_tools._contract_tests.mutation": ["mutation_cases"],
    "compiler_tools._untrusted_yaml": ["parse_yaml"],
}
__getattr__ = lazy_surface(__name__, _HOMES)

__all__ = [
    "BUNDLE_FILE",
    "BundleStore",
    "Decision",
    "NoBundle",
    "ContractFile",
    "CorpusFile",
    "ETAG_FILE",
    "FORMAT",
    "InvalidTestFiles",
    "NEEDS_YAML",
    "ScenarioFile",
    "STATE_FILE",
    "TESTS_FILE",
    "SourceClassEntry",
    "bundle_age",
    "decide",
    "decision_input",
    "failing_expectations",
    "file_schemas",
    "load_tests",
    "main",
    "mutation_cases",
    "parse_yaml",
    "read_document",
    "run_tests",
    "unsigned_bundle_tests",
]
