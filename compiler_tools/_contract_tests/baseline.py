"""`evidence-compiler test DIR --baseline OLD`: the contract under test against an older one,
every widening listed (`compiler.contract_widenings`).

OLD is whatever holds the older contract: a bundle file (read as `test BUNDLE` reads one:
verified with `--public-key` when given, else checked for integrity), a test directory (its
`contract.yaml`), or a contract file, JSON or YAML, either a test directory's `contract.yaml`
shape (`format: evidence-compiler.tests/1`, `contract: {...}`) or a bare contract.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from compiler._errors import InvalidInput
from compiler._input import Contract
from compiler._json_reader import parse_json
from compiler._widenings import Widening, contract_widenings
from compiler_tools._contract_tests.files import (
    CONTRACT_FILE,
    FORMAT,
    SUFFIXES,
    ContractFile,
    read_document,
)
from compiler_tools._contract_tests.loading import (
    ContractTests,
    InvalidTestFiles,
    _one_file,
    _parse,
    _problem,
    read_bundle,
)

BUNDLE_FORMAT_PREFIX = "evidence-workbench.bundle/"
OTHER_DECISION_TYPE = (
    "the baseline's contract is for decision type '{baseline}', the tests' for '{tests}': "
    "compare versions of one decision type"
)


@dataclass(frozen=True)
class Widenings:
    """The widenings of the tests' contract against the baseline's."""

    baseline: str  # where the baseline was read from
    decision_type: str
    baseline_version: str
    version: str
    widenings: tuple[Widening, ...]
    fail_on_widening: bool = False

    @property
    def failed(self) -> bool:
        """Only with `--fail-on-widening`: a widening is otherwise listed, not a failure."""
        return self.fail_on_widening and bool(self.widenings)

    def to_json(self) -> dict[str, Any]:
        return {
            "origin": self.baseline,
            "version": self.baseline_version,
            "fail_on_widening": self.fail_on_widening,
            "failed": self.failed,
            "widenings": [w.to_json() for w in self.widenings],
        }

    def summary_text(self) -> str:
        against = (
            f"version {self.version} against version {self.baseline_version} ({self.baseline})"
        )
        if not self.widenings:
            return f"no widening of {against}"
        mark = "FAIL" if self.fail_on_widening else "    "
        lines = [f"{len(self.widenings)} widening(s) of {against}:"]
        return "\n".join(lines + [f"{mark} {w.id}: {w.detail}" for w in self.widenings])

    def junit_suite(self, root: ET.Element) -> None:
        """One testsuite, one testcase per widening (its detail in system-out), each a
        failure only with `--fail-on-widening`."""
        suite = ET.SubElement(
            root,
            "testsuite",
            name=f"widenings against version {self.baseline_version}",
            tests=str(len(self.widenings)),
            failures=str(len(self.widenings) if self.fail_on_widening else 0),
            errors="0",
            skipped="0",
        )
        for widening in self.widenings:
            case = ET.SubElement(
                suite, "testcase", name=widening.id, classname=f"{self.decision_type}.widenings"
            )
            if self.fail_on_widening:
                failure = ET.SubElement(case, "failure", message=widening.detail)
                failure.text = widening.detail
            out = ET.SubElement(case, "system-out")
            out.text = widening.detail


def load_baseline(path: str | Path, public_keys: Any = None) -> Contract:
    """The contract held by `path` (a bundle, a test directory or a contract file), or
    `InvalidTestFiles` naming the file and what is wrong."""
    root = Path(path)
    if root.is_dir():
        problems: list[dict[str, Any]] = []
        contract_path = _one_file(root, CONTRACT_FILE, problems)
        header = _parse(contract_path, ContractFile, problems) if contract_path else None
        if header is None:
            raise InvalidTestFiles(problems)
        return header.contract
    if not root.is_file():
        raise InvalidTestFiles([_problem(root, [], "no such baseline bundle, directory or file")])
    data = _read(root)
    shape = data.get("format") if isinstance(data, dict) else None
    if isinstance(shape, str) and shape.startswith(BUNDLE_FORMAT_PREFIX):
        return read_bundle(root, public_keys).contract
    model: type[ContractFile] | type[Contract] = ContractFile if shape == FORMAT else Contract
    try:
        parsed = model.model_validate(data)
    except ValidationError as exc:
        raise InvalidTestFiles(
            [_problem(root, list(e["loc"]), e["msg"]) for e in exc.errors()]
        ) from None
    return parsed.contract if isinstance(parsed, ContractFile) else parsed


def _read(file: Path) -> Any:
    try:
        if file.suffix in SUFFIXES:
            return read_document(file)
        return parse_json(file.read_bytes())  # a bundle saved under another name
    except InvalidInput as exc:
        raise InvalidTestFiles([_problem(file, e["loc"], e["msg"]) for e in exc.errors]) from None
    except OSError as exc:
        raise InvalidTestFiles([_problem(file, [], f"cannot be read ({exc.strerror})")]) from None


def baseline_widenings(
    tests: ContractTests,
    path: str | Path,
    public_keys: Any = None,
    *,
    fail_on_widening: bool = False,
) -> Widenings:
    """Every widening of the tests' contract against the one at `path`."""
    old = load_baseline(path, public_keys)
    new = tests.contract
    if old.decision_type != new.decision_type:
        message = OTHER_DECISION_TYPE.format(baseline=old.decision_type, tests=new.decision_type)
        raise InvalidTestFiles([_problem(Path(path), ["decision_type"], message)])
    return Widenings(
        baseline=str(path),
        decision_type=new.decision_type,
        baseline_version=old.version,
        version=new.version,
        widenings=tuple(contract_widenings(old, new)),
        fail_on_widening=fail_on_widening,
    )
