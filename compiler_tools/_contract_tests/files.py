"""The test directory's file format: the pydantic models of the contract, corpus and scenario
files (`schema --tests` prints their JSON Schema), and reading one file's document.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from compiler._codes import authority_tier
from compiler._errors import InvalidInput
from compiler._input import Contract
from compiler._json_reader import parse_json

FORMAT = "evidence-compiler.tests/1"
CONTRACT_FILE = "contract"
SUFFIXES = (".yaml", ".yml", ".json")
NEEDS_YAML = (
    "reading YAML needs PyYAML: pip install 'evidence-compiler[yaml]' (or write the file as .json)"
)

ExpectedState = Literal["supported", "contradicted", "unknown", "refused"]


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Expected(_File):
    """What a compile must give: each named proposition's state (`refused` for every slot
    of a compile that must be refused), and optionally exactly which ids are admitted and
    rejected, whether the decision is ready, exactly which propositions block it, and for
    named slots their `required` flag and the ids they rest on, in order."""

    slots: dict[str, ExpectedState]
    admitted: list[str] | None = None
    rejected: list[str] | None = None
    decision_ready: bool | None = None
    blocking: list[str] | None = None
    required: dict[str, bool] | None = None
    resource_ids: dict[str, list[str]] | None = None

    def pinned(self) -> dict[str, Any]:
        """The expectation as `compiler.output_failures` reads it."""
        return self.model_dump(exclude_none=True)


class PerturbationSpec(_File):
    """One operator of `compiler.OPERATORS` with its arguments."""

    operator: str
    args: dict[str, Any] = {}


class VariantExpectation(_File):
    """The expected outcome of one perturbation of the scenario (standard or not)."""

    perturbation: PerturbationSpec
    expected: Expected


class ScenarioFile(_File):
    """`scenarios/NAME.yaml`: a request and a corpus, named (`corpus: NAME` for
    `corpora/NAME.yaml`) or inline (`candidates`, optionally `directory`)."""

    name: str = Field(min_length=1)
    description: str = ""
    request: dict[str, Any]
    corpus: str | None = None
    directory: dict[str, Any] | None = None
    candidates: list[dict[str, Any]] | None = None
    expected: Expected
    perturbations: Literal["standard", "none"] = "standard"
    variants: list[VariantExpectation] = []

    @model_validator(mode="after")
    def _one_corpus(self) -> ScenarioFile:
        if (self.corpus is None) == (self.candidates is None):
            raise ValueError("give either `corpus` (a file in corpora/) or inline `candidates`")
        if self.corpus is not None and self.directory is not None:
            raise ValueError("`directory` belongs to the corpus file when `corpus` names one")
        return self


class CorpusFile(_File):
    """`corpora/NAME.yaml`: compile-input candidates and the directory they resolve in."""

    description: str = ""
    directory: dict[str, Any] = {}
    candidates: list[dict[str, Any]]


# The catalogue's authority tiers by name, 1 the most authoritative.


class SourceClassEntry(_File):
    key: str
    label: str = ""
    description: str = ""
    authority_tier: int | str = 1
    weak: bool = False

    @field_validator("authority_tier")
    @classmethod
    def _known_tier(cls, value: int | str) -> int | str:
        authority_tier(value)
        return value

    @property
    def tier(self) -> int:
        return authority_tier(self.authority_tier)


class ContractFile(_File):
    """`contract.yaml`: the contract under test, and the catalogue's classes (the weak ones
    are substituted first by the perturbations; with the others and their authority tiers
    they are what the contract probes judge by, and every class the contract accepts must be
    one of them)."""

    format: Literal["evidence-compiler.tests/1"]
    contract: Contract
    source_classes: list[SourceClassEntry] = []


def file_schemas() -> dict[str, Any]:
    """`schema --tests`: the JSON Schema of each file of a test directory."""
    return {
        "contract": ContractFile.model_json_schema(),
        "scenario": ScenarioFile.model_json_schema(),
        "corpus": CorpusFile.model_json_schema(),
    }


def read_document(file: Path) -> Any:
    """A test file's value: JSON through the CLI's safe parser, YAML through its safe loader
    (`compiler_tools._untrusted_yaml`: measured before it is built; dates and times read back
    as ISO strings, as in JSON)."""
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise InvalidInput([{"loc": [], "msg": f"cannot be read ({exc.strerror})"}]) from None
    if file.suffix == ".json":
        return parse_json(data)
    try:  # PyYAML is an optional extra (evidence-compiler[yaml]): say so when it is missing
        import yaml  # noqa: F401

        from compiler_tools._untrusted_yaml import parse_yaml
    except ImportError:
        raise InvalidInput([{"loc": [], "msg": NEEDS_YAML}]) from None
    return _iso_dates(parse_yaml(data))


def _iso_dates(value: Any) -> Any:
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: _iso_dates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_iso_dates(v) for v in value]
    return value
