"""A run's report as the CLI's summary text and as JUnit XML."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from compiler_tools._contract_tests.baseline import Widenings
from compiler_tools._contract_tests.running import Report


def summary_text(report: Report) -> str:
    lines = [f"{report.decision_type} version {report.version} ({report.origin})"]
    for scenario in report.scenarios:
        perturbations = [c for c in scenario.cases if c.kind == "perturbation"]
        flipped = sum(1 for c in perturbations if c.flips and c.flips["slots"])
        status = "FAIL" if scenario.failed else "ok  "
        lines.append(
            f"{status} {scenario.name}: {scenario.result}, "
            f"{len(scenario.cases) - len(perturbations)} expectations, "
            f"{len(perturbations)} perturbations ({flipped} with flips)"
        )
        lines += [f"     {c.name}: {m}" for c in scenario.cases for m in c.failures]
    failed = sum(s.failed for s in report.scenarios)
    total = sum(len(s.cases) for s in report.scenarios)
    lines.append(f"{'FAILED' if failed else 'passed'}: {total - failed} of {total} hold")
    return "\n".join(lines)


def junit_xml(report: Report, widenings: Widenings | None = None) -> bytes:
    """JUnit XML: one testsuite per scenario, one testcase per expectation / perturbation;
    a perturbation's flips are in its system-out. With `widenings` (`--baseline`), one more
    testsuite listing them."""
    root = ET.Element("testsuites", name=f"{report.decision_type} version {report.version}")
    for scenario in report.scenarios:
        suite = ET.SubElement(root, "testsuite", name=scenario.name,
                              tests=str(len(scenario.cases)), failures=str(scenario.failed),
                              errors="0", skipped="0")  # fmt: skip
        for case in scenario.cases:
            classname = f"{report.decision_type}.{scenario.name}"
            element = ET.SubElement(suite, "testcase", name=case.name, classname=classname)
            if case.failures:
                failure = ET.SubElement(element, "failure", message=case.failures[0])
                failure.text = "\n".join(case.failures)
            if case.flips is not None:
                out = ET.SubElement(element, "system-out")
                out.text = json.dumps(case.flips["slots"], ensure_ascii=False)
    if widenings is not None:
        widenings.junit_suite(root)
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"
