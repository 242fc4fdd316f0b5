"""A format-3 bundle's test suite: its scenarios, in a document of their own that the bundle
names by sha256 in its signed manifest (`manifest.tests`), so the signatures cover it while a
service that only compiles never downloads it.

    {"format": "evidence-workbench.suite/1",
     "decision_type": "…", "version": "…", "contract_sha256": "<the bundle's contract>",
     "scenarios": [{"name", "request", "corpus", "expected"}, …]}

The file form is the RFC 8785 canonical JSON plus one newline, like a bundle's; the sha256 is
that of the canonical JSON (the file without its newline).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, field_validator

from compiler._canonical import canonical_bytes, sha256_hex
from compiler._input import Contract
from compiler_trust._bundle.document import (
    Bundle,
    Name,
    Scenario,
    Sha256Hex,
    VerifiedBundle,
    _check_expected_keys,
    _Frozen,
    _sorted_distinct,
)
from compiler_trust._bundle.reasons import (
    FORMAT,
    NO_SUITE,
    SUITE_ALTERED,
    SUITE_FORMAT,
    SUITE_NOT_NEEDED,
    BundleInvalid,
    Problem,
    SuiteInvalid,
    _json_type,
    _schema_error,
)
from compiler_trust._bundle.verification import parse_bundle_bytes


class ScenarioSuite(_Frozen):
    """The test suite document, validated."""

    format: Literal["evidence-workbench.suite/1"]
    decision_type: Name
    version: Name
    contract_sha256: Sha256Hex
    scenarios: Annotated[tuple[Scenario, ...], Field(min_length=1)]

    @field_validator("scenarios")
    @classmethod
    def _scenario_names(cls, value: tuple[Scenario, ...]) -> tuple[Scenario, ...]:
        return _sorted_distinct(value, "name", "scenario")


def contract_sha256(contract: Contract) -> str:
    """The sha256 a suite names its contract by: the contract as a bundle carries it."""
    return sha256_hex(contract.model_dump(mode="json"))


def split_suite(body: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """A format-3 body and its test suite from a body that carries its scenarios (as format
    2 does): the scenarios move into the suite, validated and sorted, and the manifest's
    `tests` names the suite's sha256 and count (None, and no suite, when there are none).
    The body is returned unsigned and not yet normalised: `sign_bundle` or
    `assemble_bundle` take it from there."""
    rest = {k: v for k, v in body.items() if k != "scenarios"}
    scenarios = list(body.get("scenarios") or ())
    manifest = dict(rest.get("manifest") or {})
    suite = None
    if scenarios:
        try:
            contract = Contract.model_validate(rest.get("contract"))
        except ValidationError as exc:
            raise _schema_error(exc, "the bundle body's contract is invalid") from None
        suite = normalise_suite(
            {
                "format": SUITE_FORMAT,
                "decision_type": manifest.get("decision_type"),
                "version": manifest.get("version"),
                "contract_sha256": contract_sha256(contract),
                "scenarios": scenarios,
            }
        )
    manifest["tests"] = suite_digest(suite) if suite is not None else None
    return {**rest, "format": FORMAT, "manifest": manifest}, suite


def normalise_suite(document: Mapping[str, Any]) -> dict[str, Any]:
    """The suite as it is hashed: validated, every default written out, scenarios sorted."""
    try:
        return ScenarioSuite.model_validate(dict(document)).model_dump(mode="json")
    except ValidationError as exc:
        raise _suite_schema_error(exc) from None


def suite_digest(suite: Mapping[str, Any]) -> dict[str, Any]:
    """What a bundle's manifest says of its suite: `{"sha256", "count"}`."""
    return {"sha256": sha256_hex(suite), "count": len(suite["scenarios"])}


def serialize_suite(suite: Mapping[str, Any]) -> bytes:
    """The file form: RFC 8785 canonical JSON plus one `\\n` (one byte sequence per suite)."""
    return canonical_bytes(suite) + b"\n"


def verify_suite(
    document: bytes | bytearray | str | Mapping[str, Any], bundle: VerifiedBundle | Bundle
) -> ScenarioSuite:
    """The test suite `bundle` names, checked, or `SuiteInvalid` saying why not. Pass a
    bundle you verified: the suite is trusted because the signed manifest names its sha256.

    Checks, in order: the bundle names a suite (format 3, with scenarios); the bytes are
    strict JSON; their sha256 is the one the manifest names (any change is refused as
    *altered*, and so is another version's suite); the schema, the count, the decision type,
    version and contract it names, and that its expectations name the contract's
    propositions; for bytes, that they are exactly the canonical file form."""
    model = bundle.bundle if isinstance(bundle, VerifiedBundle) else bundle
    manifest = model.manifest
    facts = {"decision_type": manifest.decision_type, "version": manifest.version}
    if model.format != FORMAT:
        raise SuiteInvalid(SUITE_NOT_NEEDED.format(**facts, format=model.format), Problem.FORMAT)
    digest = manifest.tests
    if digest is None:
        raise SuiteInvalid(NO_SUITE.format(**facts), Problem.FORMAT)
    data: bytes | None = None
    if isinstance(document, bytes | bytearray | str):
        if isinstance(document, str):
            data = document.encode("utf-8", "surrogatepass")
        else:
            data = bytes(document)
        try:
            parsed = parse_bundle_bytes(data)
        except BundleInvalid as exc:
            raise SuiteInvalid(f"test suite: {exc.reason}", exc.problem) from None
    else:
        parsed = document
    if not isinstance(parsed, Mapping):
        raise SuiteInvalid(
            f"a test suite is a JSON object, not {_json_type(parsed)}", Problem.FORMAT
        )
    try:
        actual = sha256_hex(parsed)
    except (ValueError, TypeError, RecursionError) as exc:
        raise SuiteInvalid(
            f"malformed test suite: not representable as RFC 8785 JSON ({exc})",
            Problem.MALFORMED,
        ) from None
    if actual != digest.sha256:
        raise SuiteInvalid(
            SUITE_ALTERED.format(**facts, actual=actual, expected=digest.sha256), Problem.ALTERED
        )
    try:
        suite = ScenarioSuite.model_validate(dict(parsed))
        _check_expected_keys(suite.scenarios, model.contract)
    except ValidationError as exc:
        raise _suite_schema_error(exc) from None
    except ValueError as exc:
        raise SuiteInvalid(f"the test suite is inconsistent: {exc}", Problem.SCHEMA) from None
    named = (suite.decision_type, suite.version, suite.contract_sha256, len(suite.scenarios))
    expected = (manifest.decision_type, manifest.version, contract_sha256(model.contract),
                digest.count)  # fmt: skip
    if named != expected:
        raise SuiteInvalid(
            "the test suite is inconsistent: it names decision type, version, contract and "
            f"count {named}, its bundle {expected}",
            Problem.SCHEMA,
        )
    if data is not None and data != serialize_suite(parsed):
        raise SuiteInvalid(
            "the test suite file was altered: its contents are intact, but its bytes are not "
            "the canonical form it was exported in (RFC 8785 JSON and one newline)",
            Problem.NOT_CANONICAL,
        )
    return suite


def _suite_schema_error(exc: ValidationError) -> SuiteInvalid:
    error = _schema_error(exc, f"the test suite does not match the {SUITE_FORMAT} schema")
    return SuiteInvalid(error.reason, Problem.SCHEMA, error.errors)
