"""Contract tests as files, and `evidence-compiler test DIR|BUNDLE`.

A test directory holds one decision type's contract and its scenarios, reviewable in a pull
request (docs/distribution.md has the format and an example)::

    DIR/contract.yaml        ContractFile: the contract, optionally its source classes
    DIR/corpora/NAME.yaml    CorpusFile: a fixture corpus (directory, candidates)
    DIR/scenarios/NAME.yaml  ScenarioFile: a request, a corpus (by name or inline), the
                             expected slot states (and admitted / rejected ids), optional
                             expectations for single perturbations

Each file may be `.yaml`/`.yml` (needs PyYAML: `pip install 'evidence-compiler[yaml]'`) or
`.json` (standard library only). `schema --tests` prints the JSON Schema of the three files.

`run_tests` compiles every scenario, checks its expectations, runs the standard perturbation
suite (`compiler.perturb.standard_suite`) plus the perturbations a scenario names, and judges
each variant in one place (`judge_variant`). Exit codes: 0 every expectation holds, 1 a
failure, 2 invalid files (every problem listed with its file and location). JUnit XML has one
testsuite per scenario and one testcase per expectation and per perturbation.

Reads files (the CLI layer), never the network or a clock.
"""

from __future__ import annotations

import datetime as dt
import json
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .codes import Result
from .errors import InvalidInput
from .jsonio import parse_json
from .loading import load_input
from .models import CompileInput, CompileOutput, Contract
from .perturb import Perturbation, admitted_in, flips, slot_states, standard_suite

FORMAT = "evidence-compiler.tests/1"
CONTRACT_FILE = "contract"
SUFFIXES = (".yaml", ".yml", ".json")
NEEDS_YAML = (
    "reading YAML needs PyYAML: pip install 'evidence-compiler[yaml]' (or write the file as .json)"
)

ExpectedState = Literal["supported", "contradicted", "unknown", "refused"]


# --------------------------------------------------------------------------- the file format


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Expected(_File):
    """What a compile must give: each named proposition's state (`refused` for every slot
    of a compile that must be refused), and optionally exactly which ids are admitted and
    rejected."""

    slots: dict[str, ExpectedState]
    admitted: list[str] | None = None
    rejected: list[str] | None = None


class PerturbationSpec(_File):
    """One operator of `compiler.perturb.OPERATORS` with its arguments."""

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


class SourceClassEntry(_File):
    key: str
    label: str = ""
    description: str = ""
    authority_tier: int | str = 1
    weak: bool = False


class ContractFile(_File):
    """`contract.yaml`: the contract under test, and the catalogue's classes (the weak ones
    are substituted first by the perturbations)."""

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


# --------------------------------------------------------------------------- loading


class InvalidTestFiles(InvalidInput):
    """Invalid test files: `errors` are `{"file", "loc", "msg"}`, every problem found."""

    def __str__(self) -> str:
        return "invalid test files:\n" + "\n".join(
            f"{e['file']}: {_where(e['loc'])}: {e['msg']}" for e in self.errors
        )


@dataclass(frozen=True)
class Case:
    """One scenario ready to run."""

    name: str
    source: str
    document: CompileInput
    expected: Expected
    standard: bool = True
    variants: tuple[tuple[Perturbation, Expected], ...] = ()


@dataclass(frozen=True)
class ContractTests:
    contract: Contract
    weak_classes: tuple[str, ...]
    cases: tuple[Case, ...]
    origin: str


def load_tests(path: str | Path, public_keys: Any = None) -> ContractTests:
    """A test directory or a bundle file as a `ContractTests`, or `InvalidTestFiles`. A bundle is
    verified against `public_keys` when given, else checked for integrity only."""
    root = Path(path)
    if root.is_dir():
        return _load_directory(root)
    if root.is_file():
        return _load_bundle(root, public_keys)
    raise InvalidTestFiles([_problem(root, [], "no such test directory or bundle file")])


def _load_directory(root: Path) -> ContractTests:
    problems: list[dict[str, Any]] = []
    contract_path = _one_file(root, CONTRACT_FILE, problems)
    header = _parse(contract_path, ContractFile, problems) if contract_path else None
    corpora: dict[str, tuple[Path, CorpusFile]] = {}
    for file in _files(root / "corpora"):
        parsed = _parse(file, CorpusFile, problems)
        if parsed is not None:
            corpora[file.stem] = (file, parsed)
    scenario_files = _files(root / "scenarios")
    if not scenario_files:
        problems.append(_problem(root / "scenarios", [], "no scenario files (*.yaml, *.json)"))
    cases: list[Case] = []
    names: dict[str, Path] = {}
    for file in scenario_files:
        scenario = _parse(file, ScenarioFile, problems)
        if scenario is None:
            continue
        if scenario.name in names:
            problems.append(_problem(file, ["name"], f"'{scenario.name}' is also the name in "
                                     f"{names[scenario.name]}"))  # fmt: skip
            continue
        names[scenario.name] = file
        if header is None:
            continue
        case = _case(file, scenario, header.contract, corpora, problems)
        if case is not None:
            cases.append(case)
    if problems or header is None:
        raise InvalidTestFiles(problems)
    weak = tuple(c.key for c in header.source_classes if c.weak)
    return ContractTests(header.contract, weak, tuple(cases), str(root))


def _case(
    file: Path,
    scenario: ScenarioFile,
    contract: Contract,
    corpora: Mapping[str, tuple[Path, CorpusFile]],
    problems: list[dict[str, Any]],
) -> Case | None:
    corpus_file = file
    if scenario.corpus is not None:
        if scenario.corpus not in corpora:
            problems.append(_problem(file, ["corpus"], f"no corpora/{scenario.corpus}.yaml "
                                     "(or .json) in this directory"))  # fmt: skip
            return None
        corpus_file, corpus = corpora[scenario.corpus]
        directory, candidates = corpus.directory, corpus.candidates
    else:
        directory, candidates = scenario.directory or {}, scenario.candidates or []
    before = len(problems)
    _check_slots(file, ["expected", "slots"], scenario.expected, contract, problems)
    document = _document(
        {"request": scenario.request, "directory": directory, "candidates": candidates},
        contract,
        lambda loc: file if loc[:1] == ["request"] else corpus_file,
        problems,
    )
    variants = []
    for index, variant in enumerate(scenario.variants):
        loc = ["variants", index]
        _check_slots(file, [*loc, "expected", "slots"], variant.expected, contract, problems)
        perturbation = Perturbation(variant.perturbation.operator, variant.perturbation.args)
        try:
            if document is not None:
                perturbation.apply(document)
            else:
                perturbation.checked_args()
        except ValueError as exc:
            problems.append(_problem(file, [*loc, "perturbation"], str(exc)))
            continue
        variants.append((perturbation, variant.expected))
    if document is None or len(problems) > before:
        return None
    return Case(scenario.name, str(file), document, scenario.expected,
                scenario.perturbations == "standard", tuple(variants))  # fmt: skip


def _load_bundle(path: Path, public_keys: Any) -> ContractTests:
    from .bundle import BundleInvalid, inspect_bundle, verify_bundle

    try:
        data = path.read_bytes()
        bundle = verify_bundle(data, public_keys).bundle if public_keys else inspect_bundle(data)
    except (BundleInvalid, OSError) as exc:
        raise InvalidTestFiles([_problem(path, [], f"not a usable bundle: {exc}")]) from None
    problems: list[dict[str, Any]] = []
    cases = []
    for index, scenario in enumerate(bundle.scenarios):
        loc = ["scenarios", index]
        expected = Expected.model_validate(scenario.expected.model_dump())
        raw = {"request": scenario.request, "directory": scenario.corpus.directory,
               "candidates": list(scenario.corpus.candidates)}  # fmt: skip
        document = _document(raw, bundle.contract, lambda _loc: path, problems, prefix=loc)
        if document is not None:
            cases.append(Case(scenario.name, f"{path} scenario '{scenario.name}'", document,
                              expected))  # fmt: skip
    if not bundle.scenarios:
        problems.append(_problem(path, ["scenarios"], "the bundle carries no scenarios"))
    if problems:
        raise InvalidTestFiles(problems)
    weak = tuple(c.key for c in bundle.source_classes if c.weak)
    return ContractTests(bundle.contract, weak, tuple(cases), str(path))


def _document(
    raw: dict[str, Any],
    contract: Contract,
    file_of: Any,
    problems: list[dict[str, Any]],
    prefix: list[Any] | None = None,
) -> CompileInput | None:
    try:
        return load_input({**raw, "contract": contract.model_dump(mode="json")})
    except InvalidInput as exc:
        for error in exc.errors:
            loc = list(error["loc"])
            problems.append(_problem(file_of(loc), [*(prefix or []), *loc], error["msg"]))
        return None


def _check_slots(
    file: Path, loc: list[Any], expected: Expected, contract: Contract, problems: list
) -> None:
    keys = {p.key for p in contract.propositions}
    for key in expected.slots:
        if key not in keys:
            problems.append(_problem(file, [*loc, key],
                                     "not a proposition of the contract"))  # fmt: skip


def _one_file(root: Path, stem: str, problems: list[dict[str, Any]]) -> Path | None:
    found = [p for p in (root / f"{stem}{suffix}" for suffix in SUFFIXES) if p.is_file()]
    if len(found) == 1:
        return found[0]
    message = (f"more than one of {', '.join(p.name for p in found)}" if found
               else f"no {stem}.yaml (or .json): is this a test directory?")  # fmt: skip
    problems.append(_problem(root, [], message))
    return None


def _files(directory: Path) -> list[Path]:
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if p.is_file() and p.suffix in SUFFIXES)


def _parse(file: Path, model: type[BaseModel], problems: list[dict[str, Any]]) -> Any:
    try:
        data = read_document(file)
    except InvalidInput as exc:
        problems.extend(_problem(file, e["loc"], e["msg"]) for e in exc.errors)
        return None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems.extend(_problem(file, list(e["loc"]), e["msg"]) for e in exc.errors())
        return None


def read_document(file: Path) -> Any:
    """A test file's value: JSON through the CLI's safe parser, YAML through PyYAML's safe
    loader (dates and times read back as ISO strings, as in JSON)."""
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise InvalidInput([{"loc": [], "msg": f"cannot be read ({exc.strerror})"}]) from None
    if file.suffix == ".json":
        return parse_json(data)
    try:
        import yaml
    except ImportError:
        raise InvalidInput([{"loc": [], "msg": NEEDS_YAML}]) from None
    try:
        return _iso_dates(yaml.safe_load(data))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise InvalidInput([{"loc": [], "msg": f"not valid YAML: {problem}{where}"}]) from None


def _iso_dates(value: Any) -> Any:
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: _iso_dates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_iso_dates(v) for v in value]
    return value


def _problem(file: Path, loc: Iterable[Any], msg: str) -> dict[str, Any]:
    return {"file": str(file), "loc": list(loc), "msg": msg}


def _where(loc: list[Any]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(file)"


# --------------------------------------------------------------------------- running


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
    from .pipeline import compile_input

    reports = []
    for case in tests.cases:
        base = compile_input(case.document)
        states = slot_states(base, case.document)
        cases = [
            Check(name, "expectation", failures)
            for name, failures in expectation_failures(base, states, case.expected)
        ]
        expected_by_name = {p.name: expected for p, expected in case.variants}
        suite = (
            standard_suite(case.document, tests.weak_classes, base=base) if case.standard else []
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
    every violation of the perturbation's relation (`compiler.relations`; findings and
    expected consequences do not fail a test), then the scenario file's own expectation for
    that variant, if any."""
    from .relations import VIOLATION, Context, judge

    context = Context(case.document, variant_input, tests.weak_classes)
    failures = [
        f"violation: {verdict.message}"
        for verdict in judge(base, variant, perturbation, context)
        if verdict.kind == VIOLATION
    ]
    if expected is not None:
        states = slot_states(variant, variant_input)
        checks = expectation_failures(variant, states, expected)
        failures += [message for _, found in checks for message in found]
    return failures


def expectation_failures(
    output: CompileOutput, states: Mapping[str, str], expected: Expected
) -> list[tuple[str, list[str]]]:
    """One `(testcase name, failure messages)` per expectation: each slot, then the admitted
    and rejected id sets when given."""
    checks: list[tuple[str, list[str]]] = []
    for key, state in expected.slots.items():
        actual = states.get(key, "missing")
        message = f"slot {key}: expected {state}, got {actual}"
        if output.result is not Result.COMPILED and output.refusal and actual != state:
            message += f" ({output.refusal.pass_}: {output.refusal.reason})"
        checks.append((f"slot {key} is {state}", [] if actual == state else [message]))
    actual_sets = {"admitted": admitted_in(output), "rejected": {r["id"] for r in output.rejected}}
    for what, actual_ids in actual_sets.items():
        wanted = getattr(expected, what)
        if wanted is None:
            continue
        missing, extra = sorted(set(wanted) - actual_ids), sorted(actual_ids - set(wanted))
        found = ([f"{what}: expected but not {what}: {', '.join(missing)}"] if missing else []) + (
            [f"{what}: {what} but not expected: {', '.join(extra)}"] if extra else []
        )
        checks.append((f"{what} ids", found))
    return checks


# --------------------------------------------------------------------------- reporting


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


def junit_xml(report: Report) -> bytes:
    """JUnit XML: one testsuite per scenario, one testcase per expectation / perturbation;
    a perturbation's flips are in its system-out."""
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
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


__all__ = [
    "FORMAT",
    "ContractFile",
    "CorpusFile",
    "Expected",
    "Report",
    "ScenarioFile",
    "InvalidTestFiles",
    "ContractTests",
    "judge_variant",
    "junit_xml",
    "load_tests",
    "run_tests",
    "summary_text",
    "file_schemas",
]
