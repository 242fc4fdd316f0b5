"""Compile inputs against a bundle's contract: a request and candidates, or one of its
scenarios.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from compiler._canonical import sha256_hex
from compiler._errors import InvalidInput
from compiler._input import CompileInput, Contract
from compiler._validate_input import load_input
from compiler_trust._bundle.document import Bundle, Scenario, VerifiedBundle
from compiler_trust._bundle.reasons import _json_type

if TYPE_CHECKING:
    from compiler_trust._bundle.suite import ScenarioSuite


def compile_input_from_bundle(bundle: VerifiedBundle | Bundle, document: Any) -> CompileInput:
    """The compile input for `document` against the bundle's contract.

    `document` is a compile input without a contract: `request`, `candidates` and optionally
    `directory`. It may carry a `contract` only if that contract is the bundle's one (equal
    after validation, i.e. the same contract sha256 in the output); any other contract is
    refused rather than silently replaced, because the caller evidently meant to compile
    against something else. Raises `InvalidInput` (exit 2) listing every problem, the
    contract mismatch included, with locations."""
    contract = bundle.contract
    if not isinstance(document, Mapping):
        raise InvalidInput(
            [{"loc": [], "msg": f"the input is {_json_type(document)}, not an object"}]
        )
    doc = dict(document)
    problems: list[dict[str, Any]] = []
    if "contract" in doc:
        given = doc.pop("contract")
        if not _same_contract(given, contract):
            problems.append(
                {
                    "loc": ["contract"],
                    "msg": (
                        "the input carries a contract that is not the bundle's "
                        f"('{contract.decision_type}' version '{contract.version}', "
                        f"sha256 {sha256_hex(contract.model_dump(mode='json'))}); "
                        "leave `contract` out to compile against the bundle"
                    ),
                }
            )
    doc["contract"] = contract.model_dump(mode="json")
    try:
        compiled = load_input(doc)
    except InvalidInput as exc:
        problems.extend(exc.errors)
    if problems:
        raise InvalidInput(problems)
    return compiled


def scenario_input(
    bundle: VerifiedBundle | Bundle,
    scenario: Scenario | str,
    suite: ScenarioSuite | None = None,
) -> CompileInput:
    """One of the bundle's scenarios as a compile input against the bundle's contract, so a
    service can re-run the published expectations with its own compiler. A scenario named by
    name is looked up in `suite` (a format-3 bundle's, from `verify_suite`) or, without
    one, in the bundle (format 2)."""
    if isinstance(scenario, str):
        scenarios = suite.scenarios if suite is not None else bundle.scenarios
        found = next((s for s in scenarios if s.name == scenario), None)
        if found is None:
            raise KeyError(f"the bundle has no scenario '{scenario}'")
        scenario = found
    document = {
        "request": scenario.request,
        "directory": scenario.corpus.directory,
        "candidates": list(scenario.corpus.candidates),
    }
    return compile_input_from_bundle(bundle, document)


def _same_contract(given: Any, contract: Contract) -> bool:
    try:
        return Contract.model_validate(given) == contract
    except ValidationError:
        return False
