"""`evidence-compiler test DIR --mutate`: the test directory's scenarios as mutation cases
(`compiler._mutation`), and the mutation report as text and as a JUnit testsuite.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable

from compiler._mutation.running import (
    EQUIVALENT,
    EXPECTATIONS,
    STANDARD,
    SURVIVING,
    MutationCase,
    MutationReport,
    run_mutation,
)
from compiler_tools._contract_tests.loading import ContractTests
from compiler_tools._contract_tests.reporting import junit_xml
from compiler_tools._contract_tests.running import Report

KILLED_BY = {STANDARD: "the standard review", EXPECTATIONS: "the scenarios' expectations"}


def mutation_cases(tests: ContractTests) -> list[MutationCase]:
    """Each scenario with its own expectations, of the base compile and of its variants."""
    return [
        MutationCase(
            c.name,
            c.document,
            c.expected.pinned(),
            [(p, expected.pinned()) for p, expected in c.variants],
        )  # fmt: skip
        for c in tests.cases
    ]


def mutate(
    tests: ContractTests, progress: Callable[[int, int], None] | None = None
) -> MutationReport:
    """Every mutant of the directory's contract against its scenarios."""
    return run_mutation(tests.contract, mutation_cases(tests), catalogue=tests.catalogue,
                        weak_classes=tests.weak_classes, progress=progress)  # fmt: skip


def score_text(report: MutationReport) -> str:
    totals = report.to_json()["totals"]
    scored = totals["killed"] + totals["surviving"]
    score = (
        f"score {report.score:.0%} ({totals['killed']} of {scored} killed)"
        if report.score is not None
        else "no score: every mutant is equivalent on these scenarios"
    )
    return (f"{totals['mutants']} mutants: {totals['killed']} killed, {totals['surviving']} "
            f"surviving, {totals['equivalent']} equivalent; {score}")  # fmt: skip


def mutation_text(report: MutationReport) -> str:
    """Each mutant with its status; a surviving one with its advice and proposal; the score."""
    lines = ["Mutation testing (each a mistake an owner might make):"]
    for result in report.results:
        mutant = result.mutant
        status = {SURVIVING: "SURVIVING", EQUIVALENT: "equivalent"}.get(result.status, "killed")
        lines.append(f"{status:10} {mutant.key}: {mutant.description}")
        if result.reasons:
            by = KILLED_BY.get(result.killed_by or "", result.killed_by)
            lines.append(f"           by {by}: {result.reasons[0]}")
        if result.status == SURVIVING:
            lines.append(f"           {result.advice}")
        if result.proposal is not None and result.status == SURVIVING:
            proposal = result.proposal
            expected = json.dumps(proposal["expected"], ensure_ascii=False)
            lines.append(f"           proposed scenario '{proposal['name']}' "
                         f"({proposal['based_on']}): expected {expected}")  # fmt: skip
    lines.append(score_text(report))
    return "\n".join(lines)


def mutation_junit_xml(report: Report, mutation: MutationReport) -> bytes:
    """The test run's JUnit XML with one more testsuite, `mutation`: one testcase per mutant,
    a surviving one a failure (its advice the message), an equivalent one skipped."""
    root = ET.fromstring(junit_xml(report))
    results = mutation.results
    suite = ET.SubElement(root, "testsuite", name="mutation", tests=str(len(results)),
                          failures=str(sum(r.status == SURVIVING for r in results)),
                          errors="0",
                          skipped=str(sum(r.status == EQUIVALENT for r in results)))  # fmt: skip
    for result in results:
        classname = f"{report.decision_type}.mutation.{result.mutant.kind}"
        case = ET.SubElement(suite, "testcase", name=result.mutant.key, classname=classname)
        if result.status == SURVIVING:
            failure = ET.SubElement(case, "failure", message=result.advice)
            failure.text = json.dumps(result.to_json()["proposal"], ensure_ascii=False, indent=2)
        elif result.status == EQUIVALENT:
            ET.SubElement(case, "skipped", message="equivalent on these scenarios")
        else:
            out = ET.SubElement(case, "system-out")
            out.text = "\n".join(result.reasons)
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"
