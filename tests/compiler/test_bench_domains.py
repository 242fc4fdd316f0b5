"""The mutation benchmark's four domains (bench/domains/: a hospital's trial enrolment, an
insurer's settlement above authority, a gas network's emergency entry, a machine-tool maker's
export release under a general licence, the last written as a holdout) stay correct contracts
with passing contract tests as the compiler evolves: `bench/mutation_score.py` measures how
many contract mistakes the review catches against these originals, so an original that fails
its own tests, or has lost what the mistakes need (weak classes, contradicting classes,
several classes in precedence), would make its figures meaningless."""

from __future__ import annotations

import importlib.util
import io
import json
import sys
from pathlib import Path

import pytest

from compiler import Contract
from compiler_tools import ContractFile, load_tests, main, read_document

BENCH = Path(__file__).resolve().parents[2] / "bench"
DOMAINS = sorted(path for path in (BENCH / "domains").iterdir() if path.is_dir())


def test_there_are_four_domains_none_of_them_the_demos():
    assert [d.name for d in DOMAINS] == [
        "claim_payout",
        "export_licence",
        "gas_entry",
        "trial_enrolment",
    ]
    for directory in DOMAINS:
        contract = ContractFile.model_validate(read_document(directory / "contract.yaml"))
        assert contract.contract.decision_type.split(".")[0] not in {"credit", "refund"}


@pytest.mark.parametrize("directory", DOMAINS, ids=lambda d: d.name)
def test_each_domain_holds_under_the_contract_test_runner(directory):
    out, err = io.StringIO(), io.StringIO()
    code = main(["test", str(directory), "--json"], out, err)
    report = json.loads(out.getvalue())
    failures = [
        f"{s['name']}: {c['name']}: {m}"
        for s in report["scenarios"]
        for c in s["cases"]
        for m in c["failures"]
    ]
    assert code == 0 and report["passed"], failures
    assert 5 <= report["totals"]["scenarios"] <= 8
    assert all(s["result"] == "compiled" for s in report["scenarios"])


@pytest.mark.parametrize("directory", DOMAINS, ids=lambda d: d.name)
def test_each_domain_carries_what_the_owners_mistakes_act_on(directory):
    header = ContractFile.model_validate(read_document(directory / "contract.yaml"))
    contract, catalogue = header.contract, {c.key: c for c in header.source_classes}
    tests = load_tests(directory)
    corpus = {c.id: c for case in tests.cases for c in case.document.candidates}
    assert 27 <= len(corpus) <= 31
    assert 4 <= len(contract.propositions) <= 6
    assert all(1 <= len(p.accepted_classes) <= 3 for p in contract.propositions)
    assert any(len(p.accepted_classes) > 1 for p in contract.propositions)
    assert any(not p.required for p in contract.propositions)
    accepted = {cls for p in contract.propositions for cls in p.accepted_classes}
    assert accepted <= set(catalogue), "every accepted class is in the catalogue"
    assert {catalogue[cls].weak for cls in accepted} == {False}
    weak = set(tests.weak_classes)
    claims = {(c.evidence_class, p) for c in corpus.values() for p in (*c.supports, *c.contradicts)}
    assert any(cls in weak for cls, _ in claims), "a weak item claims a proposition"
    keys = {p.key for p in contract.propositions}
    unaccepted = {
        cls
        for cls, key in claims
        if key in keys and cls not in contract.proposition(key).accepted_classes
    } - weak
    assert unaccepted, "an item of a class not flagged weak claims what does not accept it"
    contradicting = {
        (p.key, c.evidence_class)
        for c in corpus.values()
        for p in contract.propositions
        if p.key in c.contradicts and c.evidence_class in p.accepted_classes
    }
    assert any(p.accepted_classes.index(cls) > 0 for key, cls in contradicting
               for p in [contract.proposition(key)])  # fmt: skip
    stories = {(case.document.request.delegation is not None) for case in tests.cases}
    assert stories == {True, False}, "one story goes through a delegation"
    assert any(c.superseded or c.superseded_by for c in corpus.values())
    assert any(c.valid_to is not None for c in corpus.values())


def test_the_harmless_edits_each_change_something_and_keep_the_contract_valid():
    """The benchmark's harmless edits stay real edits of valid contracts, whose accepted
    classes the catalogue still holds, as the domains evolve."""
    spec = importlib.util.spec_from_file_location("mutation_score", BENCH / "mutation_score.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench
    spec.loader.exec_module(bench)
    assert sorted(bench.HARMLESS) == [d.name for d in DOMAINS]
    assert sum(len(edits) for edits in bench.HARMLESS.values()) >= 20
    for name, edits in bench.HARMLESS.items():
        domain = bench.load_domain(BENCH / "domains" / name)
        for edit in edits:
            edited = edit(domain)
            assert (edited.contract, edited.classes) != (domain.contract, domain.classes), edit
            Contract.model_validate(edited.contract.model_dump(mode="json"))
            accepted = {c for p in edited.contract.propositions for c in p.accepted_classes}
            assert accepted <= set(edited.catalogue), edit
