"""Running contract tests: every scenario compiled, its expectations checked, and each
variant judged in one place (`judge_variant`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from compiler._codes import Result
from compiler._input import CompileInput
from compiler._output import CompileOutput
from compiler._perturb.arguments import Perturbation
from compiler._perturb.flips import flips
from compiler._perturb.suite import standard_suite
from compiler_tools._contract_tests.files import Expected
from compiler_tools._contract_tests.loading import Case, ContractTests


@dataclass
class Check:
    """One JUnit testcase: an expectation of the base compile, or one perturbation."""

    name: str
    kind: Literal["expectation", "perturbation"]
    failures: list[str] = field(default_factory=list)
    flips: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "passed": not self.failures,
                "failures": self.failures, "flips": self.flips}  # fmt: skip


@dataclass
class ScenarioReport:
    name: str
    source: str
    result: str
    cases: list[Check]

    @property
    def failed(self) -> int:
        return sum(1 for c in self.cases if c.failures)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "source": self.source, "result": self.result,
                "failed": self.failed, "cases": [c.to_json() for c in self.cases]}  # fmt: skip


@dataclass
class Report:
    origin: str
    decision_type: str
    version: str
    scenarios: list[ScenarioReport]

    @property
    def passed(self) -> bool:
        return all(s.failed == 0 for s in self.scenarios)

    def to_json(self) -> dict[str, Any]:
        cases = [c for s in self.scenarios for c in s.cases]
        return {
            "origin": self.origin,
            "decision_type": self.decision_type,
            "version": self.version,
            "passed": self.passed,
            "totals": {"scenarios": len(self.scenarios), "testcases": len(cases),
                       "failed": sum(1 for c in cases if c.failures),
                       "with_flips": sum(1 for c in cases if c.flips and c.flips["slots"])},
            "scenarios": [s.to_json() for s in self.scenarios],
        }  # fmt: skip


def run_tests(tests: ContractTests) -> Report:
    """Compile every case and its perturbations; judge them. Pure given the `ContractTests`."""
    from compiler._pipeline import compile_input

    reports = []
    for case in tests.cases:
        base = compile_input(case.document)
        cases = [
            Check(name, "expectation", failures)
            for name, failures in expectation_failures(base, case.document, case.expected)
        ]
        expected_by_name = {p.name: expected for p, expected in case.variants}
        suite = (
            standard_suite(case.document, tests.weak_classes, base=base, catalogue=tests.catalogue)
            if case.standard
            else []
        )
        names = {p.name for p in suite}
        suite += [p for p, _ in case.variants if p.name not in names]
        for perturbation in suite:
            variant_input = perturbation.apply(case.document)
            variant = compile_input(variant_input)
            failures = judge_variant(
                tests, case, perturbation, base, variant, variant_input,
                expected_by_name.get(perturbation.name),
            )  # fmt: skip
            cases.append(Check(perturbation.name, "perturbation", failures,
                                  flips(base, variant, case.document)))  # fmt: skip
        reports.append(ScenarioReport(case.name, case.source, str(base.result), cases))
    return Report(tests.origin, tests.contract.decision_type, tests.contract.version, reports)


def failing_expectations(tests: ContractTests) -> list[tuple[str, list[str]]]:
    """Each scenario whose own expectations (of its base compile, not of a perturbation) do
    not hold, with the failure messages `run_tests` would report for them, in order; one
    compile per scenario. What the workbench checks before it builds a bundle to sign."""
    from compiler._pipeline import compile_input

    failing = []
    for case in tests.cases:
        base = compile_input(case.document)
        found = expectation_failures(base, case.document, case.expected)
        messages = [message for _, failures in found for message in failures]
        if messages:
            failing.append((case.name, messages))
    return failing


def judge_variant(
    tests: ContractTests,
    case: Case,
    perturbation: Perturbation,
    base: CompileOutput,
    variant: CompileOutput,
    variant_input: CompileInput,
    expected: Expected | None,
) -> list[str]:
    """Why one perturbation of `case` fails, or nothing. The one place a variant is judged:
    every violation of the perturbation's relation (`compiler._relations`; findings and
    expected consequences do not fail a test), then the scenario file's own expectation for
    that variant, if any."""
    from compiler._relations.registry import judge
    from compiler._relations.verdicts import VIOLATION, Context

    context = Context(case.document, variant_input, tests.weak_classes, tests.catalogue)
    failures = [
        f"violation: {verdict.message}"
        for verdict in judge(base, variant, perturbation, context)
        if verdict.kind == VIOLATION
    ]
    if expected is not None:
        checks = expectation_failures(variant, variant_input, expected)
        failures += [message for _, found in checks for message in found]
    return failures


def expectation_failures(
    output: CompileOutput, document: CompileInput, expected: Expected
) -> list[tuple[str, list[str]]]:
    """One `(testcase name, failure messages)` per expectation, checked by
    `compiler.output_failures`: each slot's state, then whether the decision is
    ready, the blocking set, each named slot's `required` flag and resource ids, and the
    admitted and rejected id sets, each when given."""
    from compiler._relations.expectations import output_failures

    found: dict[tuple[str, str | None], dict[str, Any]] = {
        (f["what"], f["key"]): f for f in output_failures(output, document, expected.pinned())
    }
    refusal = ""
    if output.result is not Result.COMPILED and output.refusal:
        refusal = f" ({output.refusal.pass_}: {output.refusal.reason})"

    def check(name: str, what: str, key: str | None, subject: str) -> None:
        failure = found.get((what, key))
        message = (
            f"{subject}: expected {_shown(failure['expected'])}, got "
            f"{_shown(failure['actual'])}{refusal}"
            if failure is not None
            else None
        )
        checks.append((name, [message] if message else []))

    checks: list[tuple[str, list[str]]] = []
    for key, state in expected.slots.items():
        check(f"slot {key} is {state}", "slot", key, f"slot {key}")
    if expected.decision_ready is not None:
        check(f"decision_ready is {_shown(expected.decision_ready)}", "decision_ready", None,
              "decision_ready")  # fmt: skip
    if expected.blocking is not None:
        check("blocking propositions", "blocking", None, "blocking")
    for key, flag in (expected.required or {}).items():
        check(f"slot {key} required is {_shown(flag)}", "required", key, f"slot {key} required")
    for key in expected.resource_ids or {}:
        check(f"slot {key} resource ids", "resource_ids", key, f"slot {key} resource_ids")
    for what in ("admitted", "rejected"):
        if getattr(expected, what) is None:
            continue
        failure = found.get((what, None))
        wanted = set(failure["expected"]) if failure else set()
        actual = set(failure["actual"]) if failure else set()
        missing, extra = sorted(wanted - actual), sorted(actual - wanted)
        checks.append((f"{what} ids",
                       ([f"{what}: expected but not {what}: {', '.join(missing)}"] if missing
                        else []) + ([f"{what}: {what} but not expected: {', '.join(extra)}"]
                                    if extra else [])))  # fmt: skip
    return checks


def _shown(value: Any) -> str:
    """A pinned value as the file states it: `true`, `[W-1, P-3]`, `missing`."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(map(str, value)) + "]"
    return str(value)
