"""Reading a test directory or a bundle into `ContractTests`, or `InvalidTestFiles` listing
every problem with its file and location.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from compiler._codes import authority_tier
from compiler._errors import InvalidInput
from compiler._input import CompileInput, Contract
from compiler._perturb.arguments import Perturbation
from compiler._validate_input import load_input
from compiler_tools._contract_tests.files import (
    CONTRACT_FILE,
    SUFFIXES,
    ContractFile,
    CorpusFile,
    Expected,
    ScenarioFile,
    read_document,
)

TESTS_FOR_A_BUNDLE = (
    "--tests names a bundle's test suite; a test directory holds its scenarios itself"
)


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
    catalogue: dict[str, int] = field(default_factory=dict)  # class key -> authority tier
    # Each accepted class the directory's catalogue lacks, located in contract.yaml:
    # `evidence-compiler test` refuses such a directory (exit 2); the workbench's importer
    # checks the classes against its live catalogue instead.
    outside_catalogue: tuple[dict[str, Any], ...] = ()


def load_tests(
    path: str | Path, public_keys: Any = None, tests: str | Path | None = None
) -> ContractTests:
    """A test directory or a bundle file as a `ContractTests`, or `InvalidTestFiles`. A bundle is
    verified against `public_keys` when given, else checked for integrity only. A format-3
    bundle's scenarios are in its test suite, the file `tests`, checked against the sha256
    the bundle's signed manifest names."""
    root = Path(path)
    if root.is_dir():
        if tests is not None:
            raise InvalidTestFiles([_problem(Path(tests), [], TESTS_FOR_A_BUNDLE)])
        return _load_directory(root)
    if root.is_file():
        return _load_bundle(root, public_keys, None if tests is None else Path(tests))
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
    if problems or header is None or contract_path is None:
        raise InvalidTestFiles(problems)
    catalogue = {c.key: c.tier for c in header.source_classes}
    outside = _outside_catalogue(contract_path, header.contract, catalogue)
    weak = tuple(c.key for c in header.source_classes if c.weak)
    return ContractTests(header.contract, weak, tuple(cases), str(root), catalogue,
                         tuple(outside))  # fmt: skip


def _outside_catalogue(
    file: Path, contract: Contract, catalogue: Mapping[str, int]
) -> list[dict[str, Any]]:
    """Each class the contract accepts that the directory's catalogue lacks, where the
    catalogue is given (`compiler.catalogue_problems`, located in the file)."""
    from compiler._relations.flags import catalogue_problems

    where = [
        ["contract", "propositions", i, "accepted_classes", j]
        for i, p in enumerate(contract.propositions)
        for j, cls in enumerate(p.accepted_classes)
        if catalogue and cls not in catalogue
    ]
    messages = catalogue_problems(contract, catalogue)
    return [_problem(file, loc, msg) for loc, msg in zip(where, messages, strict=True)]


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
    _check_keys(file, ["expected"], scenario.expected, contract, problems)
    document = _document(
        {"request": scenario.request, "directory": directory, "candidates": candidates},
        contract,
        lambda loc: file if loc[:1] == ["request"] else corpus_file,
        problems,
    )
    variants = []
    for index, variant in enumerate(scenario.variants):
        loc = ["variants", index]
        _check_keys(file, [*loc, "expected"], variant.expected, contract, problems)
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


def read_bundle(path: Path, public_keys: Any) -> Any:
    """The bundle file at `path`, verified against `public_keys` when given, else checked for
    integrity only; `InvalidTestFiles` saying why it cannot be used."""
    from compiler_trust._bundle.reasons import BundleInvalid
    from compiler_trust._bundle.verification import inspect_bundle, verify_bundle

    try:
        data = path.read_bytes()
        return verify_bundle(data, public_keys).bundle if public_keys else inspect_bundle(data)
    except (BundleInvalid, OSError) as exc:
        raise InvalidTestFiles([_problem(path, [], f"not a usable bundle: {exc}")]) from None


def _load_bundle(path: Path, public_keys: Any, tests: Path | None) -> ContractTests:
    from compiler_trust._bundle.reasons import FORMAT, SUITE_NEEDED, SUITE_NOT_NEEDED

    bundle = read_bundle(path, public_keys)
    manifest = bundle.manifest
    facts = {"decision_type": manifest.decision_type, "version": manifest.version,
             "format": bundle.format}  # fmt: skip
    if bundle.format != FORMAT:
        if tests is not None:
            raise InvalidTestFiles([_problem(tests, [], SUITE_NOT_NEEDED.format(**facts))])
        return bundle_tests(bundle, path)
    if tests is None:
        if manifest.tests is None:
            return bundle_tests(bundle, path)  # no scenarios: refused as such below
        message = SUITE_NEEDED.format(**facts, count=manifest.tests.count,
                                      sha256=manifest.tests.sha256)  # fmt: skip
        raise InvalidTestFiles([_problem(path, ["manifest", "tests"], message)])
    return bundle_tests(_with_suite(bundle, read_suite(tests, bundle)), path)


def read_suite(path: Path, bundle: Any) -> Any:
    """The test suite file at `path`, checked against the sha256 `bundle` names for it."""
    from compiler_trust._bundle.reasons import SuiteInvalid
    from compiler_trust._bundle.suite import verify_suite

    try:
        return verify_suite(path.read_bytes(), bundle)
    except (SuiteInvalid, OSError) as exc:
        raise InvalidTestFiles(
            [_problem(path, [], f"not this bundle's test suite: {exc}")]
        ) from None


def _with_suite(bundle: Any, suite: Any) -> Any:
    """What `bundle_tests` reads, the scenarios from the suite."""
    from types import SimpleNamespace

    return SimpleNamespace(contract=bundle.contract, source_classes=bundle.source_classes,
                           scenarios=suite.scenarios)  # fmt: skip


def unsigned_bundle_tests(
    body: Mapping[str, Any], origin: str, suite: Mapping[str, Any] | None = None
) -> ContractTests:
    """`bundle_tests` on a bundle body being assembled (its manifest not yet signed): only
    the contract, the source classes and the scenarios are read, from `suite` (format 3)
    when given, else from the body (format 2)."""
    from types import SimpleNamespace

    from compiler_trust._bundle.document import Scenario, SourceClass

    scenarios = (suite if suite is not None else body).get("scenarios", ())
    parts = SimpleNamespace(
        contract=Contract.model_validate(body["contract"]),
        source_classes=tuple(SourceClass.model_validate(c) for c in body["source_classes"]),
        scenarios=tuple(Scenario.model_validate(s) for s in scenarios),
    )
    return bundle_tests(parts, origin)


def bundle_tests(bundle: Any, path: str | Path) -> ContractTests:
    """The contract tests a bundle (a `BundleBody`, signed or not) carries: its
    scenarios against its own contract, with its source classes' tiers; `path` names it in
    problems and reports. The workbench runs these before it publishes (or builds a bundle
    to sign), so a bundle never ships tests that fail for its own version."""
    path = Path(path)
    problems: list[dict[str, Any]] = []
    cases = []
    for index, scenario in enumerate(bundle.scenarios):
        loc = ["scenarios", index]
        expected = _bundled_expected(path, loc, scenario.expected.model_dump(), problems)
        if expected is None:
            continue
        raw = {"request": scenario.request, "directory": scenario.corpus.directory,
               "candidates": list(scenario.corpus.candidates)}  # fmt: skip
        document = _document(raw, bundle.contract, lambda _loc: path, problems, prefix=loc)
        if document is not None:
            cases.append(Case(scenario.name, f"{path} scenario '{scenario.name}'", document,
                              expected))  # fmt: skip
    if not bundle.scenarios:
        problems.append(_problem(path, ["scenarios"], "the bundle carries no scenarios"))
    catalogue = {}
    for index, source_class in enumerate(bundle.source_classes):
        try:
            catalogue[source_class.key] = authority_tier(source_class.authority_tier)
        except ValueError as exc:
            loc = ["source_classes", index, "authority_tier"]
            problems.append(_problem(path, loc, str(exc)))
    if problems:
        raise InvalidTestFiles(problems)
    weak = tuple(c.key for c in bundle.source_classes if c.weak)
    return ContractTests(bundle.contract, weak, tuple(cases), str(path), catalogue)


def _bundled_expected(
    path: Path, loc: list[Any], raw: Mapping[str, Any], problems: list[dict[str, Any]]
) -> Expected | None:
    """A bundled scenario's expectation: the fields a test file can state (the workbench may
    keep more in a bundle, which a test does not check)."""
    try:
        return Expected.model_validate({k: v for k, v in raw.items() if k in Expected.model_fields})
    except ValidationError as exc:
        problems.extend(
            _problem(path, [*loc, "expected", *e["loc"]], e["msg"]) for e in exc.errors()
        )
        return None


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


def _check_keys(
    file: Path, loc: list[Any], expected: Expected, contract: Contract, problems: list
) -> None:
    """Every proposition an expectation names (its slots, blocking set, required flags and
    resource ids) must be one of the contract's."""
    keys = {p.key for p in contract.propositions}
    named = [("slots", key) for key in expected.slots]
    named += [("blocking", key) for key in expected.blocking or ()]
    named += [(what, key) for what in ("required", "resource_ids")
              for key in getattr(expected, what) or {}]  # fmt: skip
    for what, key in named:
        if key not in keys:
            problems.append(_problem(file, [*loc, what, key],
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


def _problem(file: Path, loc: Iterable[Any], msg: str) -> dict[str, Any]:
    return {"file": str(file), "loc": list(loc), "msg": msg}


def _where(loc: list[Any]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(file)"
