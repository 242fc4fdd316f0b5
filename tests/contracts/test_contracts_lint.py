"""Each lint rule, as an input -> findings table."""

from __future__ import annotations

import pytest

from contracts.lint import RULES, Severity, lint_document
from contracts.models import SourceClass

CATALOGUE = {
    "approved_waiver": SourceClass(key="approved_waiver"),
    "case_note": SourceClass(key="case_note", weak=True),
    "legacy_fax": SourceClass(key="legacy_fax", retired=True),
}


def doc(*propositions: tuple[str, list[str]], purposes=("annual_credit_review",)) -> dict:
    return {
        "decision_type": "credit.review.continuation",
        "version": "1",
        "purposes": list(purposes),
        "propositions": [{"key": k, "accepted_classes": c} for k, c in propositions],
    }


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        pytest.param(doc(("waiver_valid", ["approved_waiver"])), [], id="clean"),
        pytest.param(
            doc(("waiver_valid", [])), [("no_accepted_class", "waiver_valid")], id="no-class"
        ),
        pytest.param(
            doc(("waiver_valid", ["approved_waiver", "case_note"])),
            [("weak_class_accepted", "waiver_valid")],
            id="weak-class",
        ),
        pytest.param(
            doc(("waiver_valid", ["approved_waiver"]), ("waiver_valid", ["approved_waiver"])),
            [("duplicate_key", "waiver_valid")],
            id="duplicate-key",
        ),
        pytest.param(
            doc(("waiver_valid", ["approved_waiver"]), purposes=()),
            [("no_purposes", None)],
            id="no-purposes",
        ),
        pytest.param(
            doc(("waiver_valid", ["signed_fax"])),
            [("class_not_carriable", "waiver_valid")],
            id="unknown-class",
        ),
        pytest.param(
            doc(("waiver_valid", ["legacy_fax"])),
            [("class_not_carriable", "waiver_valid")],
            id="retired-class",
        ),
    ],
)
def test_lint_rules(document, expected):
    findings = lint_document(document, CATALOGUE)
    assert [(f.code, f.proposition) for f in findings] == expected


def test_every_rule_has_a_title_and_a_severity():
    assert set(RULES) == {
        "no_propositions",
        "no_accepted_class",
        "weak_class_accepted",
        "duplicate_key",
        "no_purposes",
        "class_not_carriable",
    }
    assert all(rule.title and rule.severity in Severity for rule in RULES.values())
