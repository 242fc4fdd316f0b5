"""The body of a version's bundle (what its hash and signatures cover), its test suite, and
the stored bytes of both. The format is docs/bundles.md; `publish.py` signs and stores them,
`importing.py` reads them."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError

from compiler import COMPILER_VERSION, sha256_hex
from compiler_tools import InvalidTestFiles, failing_expectations, unsigned_bundle_tests
from compiler_trust import FORMAT, split_suite
from contracts.documents import compiled_contract
from contracts.models import Bundle, BundleTestSuite, ContractVersion
from publishing import signing
from scenarios.models import CorpusCandidate, Scenario

from .catalogue import bundle_source_classes
from .messages import BUNDLE_TESTS_FAIL, BUNDLE_TESTS_INVALID, NO_BUNDLE, NO_TEST_SUITE
from .selectors import authors


def _manifest_time(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).replace(microsecond=0).isoformat()


class BundleParts(NamedTuple):
    """A bundle's body, unsigned, and its test suite (None when the type has no scenarios),
    which the body's manifest names by sha256 and count."""

    body: dict[str, Any]
    suite: dict[str, Any] | None


def bundle_parts(
    version: ContractVersion,
    *,
    publisher: str,
    approvers: Iterable[str],
    published_at: dt.datetime,
    parent_sha256: str | None,
    key_ids: Mapping[str, str] | None = None,
    report_sha256: str | None = None,
) -> BundleParts:
    """Everything a bundle's hash covers, built from the version's frozen contract and the
    source classes it accepts, and the test suite of the decision type's scenarios with
    their expectations, which the manifest names (`compiler_trust.split_suite`).
    The manifest names the publisher and approvers with the key each signs with
    (`key_ids`, person -> key id: the keys of their signed statements), every editor
    (`authors`) with their active key, if any, and the impact report the approvals name."""
    contract = compiled_contract(version).model_dump(mode="json")
    ids = key_ids or {}

    def signatory(person: str) -> dict[str, str]:
        return {"person": person, "key_id": ids[person]} if person in ids else {"person": person}

    manifest_report = {"report_sha256": report_sha256} if report_sha256 else {}
    body = {
        "format": FORMAT,
        "manifest": {
            "decision_type": version.decision_type.key,
            "version": str(version.number),
            "parent_sha256": parent_sha256,
            "author": version.created_by.get_username(),
            "publisher": signatory(publisher),
            "editors": _editors(version),
            "approvers": [signatory(name) for name in sorted(approvers)],
            "published_at": _manifest_time(published_at),
            "compiler_version": COMPILER_VERSION,
            **manifest_report,
        },
        "contract": contract,
        "source_classes": bundle_source_classes(contract),
        "scenarios": _scenarios(version, {p["key"] for p in contract["propositions"]}),
    }
    return BundleParts(*split_suite(body))


def _scenarios(version: ContractVersion, propositions: set[str]) -> list[dict[str, Any]]:
    """The decision type's scenarios as the test suite holds them: request, corpus (directory
    and candidates, in order) and expectations."""
    scenarios = list(
        Scenario.objects.live()
        .filter(decision_type=version.decision_type)
        .select_related("decision_type", "corpus")
        .order_by("name")
    )
    candidates: dict[int, list[dict[str, Any]]] = {s.corpus_id: [] for s in scenarios}
    rows = (
        CorpusCandidate.objects.live().filter(corpus_id__in=candidates).order_by("position", "id")
    )
    for corpus_id, data in rows.values_list("corpus_id", "data"):
        candidates[corpus_id].append(data)
    return [
        {
            "name": s.name,
            "description": s.description,
            "request": s.request_document(),
            "corpus": {"directory": s.corpus.directory, "candidates": candidates[s.corpus_id]},
            "expected": _expected(s, propositions),
        }
        for s in scenarios
    ]


def _editors(version: ContractVersion) -> list[dict[str, Any]]:
    editors = get_user_model().objects.filter(pk__in=authors(version)).order_by("username")
    return [
        {"person": user.get_username(), "key_id": key.key_id if key else None}
        for user in editors
        for key in [signing.active_key(user)]
    ]


def _expected(scenario: Any, propositions: set[str]) -> dict[str, Any]:
    """A scenario's expectations in the bundle's shape. Only the contract's propositions can
    be expected of it (a scenario may still name one the version dropped)."""
    return {
        "slots": {k: v for k, v in scenario.expected_slots.items() if k in propositions},
        "admitted": scenario.expected_admitted,
        "rejected": scenario.expected_rejected,
    }


# Bodies whose tests passed, by `refuse_failing_tests`'s key: the publication statement is
# drafted and then the version published over the same body, and at 10,000 scenarios the
# tests are a compile each; the second check in a process reads this instead. Oldest first.
_PASSED: dict[str, None] = {}
_PASSED_LOCK = threading.Lock()
PASSED_KEPT = 16


def refuse_failing_tests(
    version: ContractVersion, body: Mapping[str, Any], suite: Mapping[str, Any] | None
) -> None:
    """Refuse a body whose test suite's expectations do not hold for its own contract, naming
    each scenario and what it expects: `evidence-compiler test BUNDLE --tests SUITE` runs
    exactly these expectations (`compiler_tools._contract_tests`), so a bundle never names
    tests that fail for the version it carries. Called when the publication statement is
    drafted (the owner learns it before signing) and again when the version is published."""
    if suite is None:
        return
    # What the tests' outcome depends on: the contract, the catalogue the bundle carries and
    # the suite (its digest, in the manifest).
    key = sha256_hex([body["contract"], body["source_classes"], body["manifest"]["tests"]])
    if key in _PASSED:
        return
    origin = f"version {version.number}"
    try:
        failing = failing_expectations(unsigned_bundle_tests(body, origin, suite))
    except InvalidTestFiles as exc:
        problems = "; ".join(f"{_where(e['loc'], suite)}: {e['msg']}" for e in exc.errors)
        raise ValidationError(
            BUNDLE_TESTS_INVALID.format(number=version.number, problems=problems)
        ) from None
    if failing:
        count = f"{len(failing)} scenario" + ("" if len(failing) == 1 else "s")
        failures = "; ".join(f"'{name}' ({', '.join(messages)})" for name, messages in failing)
        raise ValidationError(
            BUNDLE_TESTS_FAIL.format(number=version.number, count=count, failures=failures)
        )
    with _PASSED_LOCK:
        _PASSED[key] = None
        while len(_PASSED) > PASSED_KEPT:
            del _PASSED[next(iter(_PASSED))]


def _where(loc: Iterable[Any], suite: Mapping[str, Any]) -> str:
    """A problem's location, the scenario by name rather than by index."""
    parts = list(loc)
    if len(parts) >= 2 and parts[0] == "scenarios" and isinstance(parts[1], int):
        name = suite["scenarios"][parts[1]]["name"]
        return ".".join([f"scenario '{name}'", *map(str, parts[2:])])
    return ".".join(map(str, parts))


def bundle_bytes(version: ContractVersion) -> bytes:
    """The version's bundle exactly as signed (the same bytes on every export)."""
    bundle = Bundle.objects.filter(version=version).first()
    if bundle is None:
        raise ValidationError(NO_BUNDLE.format(number=version.number))
    return bundle.data


def suite_bytes(version: ContractVersion) -> bytes:
    """The test suite of the version's bundle exactly as its manifest names it."""
    suite = BundleTestSuite.objects.filter(bundle__version=version).first()
    if suite is None:
        raise ValidationError(NO_TEST_SUITE.format(number=version.number))
    return suite.data
