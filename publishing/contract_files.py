"""A decision type's contract tests as files (`compiler.contract_tests`' directory format).

Export: the type's current version (the open one, else the latest) as `contract.yaml`, with
the catalogue entries of the classes it accepts, each corpus as `corpora/NAME.yaml` and each
scenario as `scenarios/NAME.yaml`: exactly what `evidence-compiler test DIR` runs, so a
retrieval service's CI can run the workbench's suite without the workbench.

Import is two steps. `import_plan` reads a directory (validated with `load_tests`: every
problem of every file is listed, nothing is read half) and says what it would change against
the current draft: the contract's differences as the impact report's sentences, and the
corpora and scenarios it would add or replace. Nothing is written. `import_apply` then
writes the corpora and scenarios in one transaction, and only if the plan's `sha256` is still
what the files and the workbench give (a changed draft or file means a new plan to read). The
contract itself is not rewritten by an import: its differences are shown so that the owner
edits the draft in the editor, where every edit is linted, locked and audited.
"""

from __future__ import annotations

import datetime as dt
import io
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from django.core.exceptions import ValidationError
from django.db import transaction

from compiler.canonical import sha256_hex
from compiler.contract_tests import (
    FORMAT as TESTS_FORMAT,
)
from compiler.contract_tests import (
    ContractFile,
    CorpusFile,
    ScenarioFile,
    load_tests,
    read_document,
)
from contracts import selectors
from contracts.documents import contract_document
from contracts.models import DecisionType, SourceClass
from contracts.services import Actor
from scenarios import services as scenario_services
from scenarios.models import Corpus, Scenario

from .impact import contract_changes

SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")

# Messages tests assert on.
NO_VERSION = "Decision type '{key}' has no version to export."
WRONG_TYPE = "The files are contract tests of '{found}', not of '{key}'."
PLAN_STALE = (
    "The draft, the suite or the files changed since this plan was shown; nothing was "
    "imported. Read the new plan and confirm again."
)


def file_stem(name: str) -> str:
    """A corpus or scenario name as a file name (kept as it is when it already is one)."""
    if SAFE_NAME.match(name):
        return name
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-._") or "unnamed"


def _yaml(comment: str, document: Any) -> str:
    body = yaml.safe_dump(document, sort_keys=False, allow_unicode=True)
    return f"# {comment}\n{body}"


# --------------------------------------------------------------------------- export


def export_files(decision_type: DecisionType) -> dict[str, str]:
    """The test directory of the type's current version: relative path -> text."""
    version = selectors.current_version(decision_type=decision_type)
    if version is None:
        raise ValidationError(NO_VERSION.format(key=decision_type.key))
    contract = contract_document(version)
    accepted = {c for p in contract["propositions"] for c in p["accepted_classes"]}
    classes = [
        {"key": c.key, "label": c.label, "description": c.description,
         "authority_tier": c.authority_tier, "weak": c.weak}
        for c in SourceClass.objects.filter(key__in=accepted).order_by("key")
    ]  # fmt: skip
    files = {
        "contract.yaml": _yaml(
            f"{decision_type.key} version {version.number} ({version.status}), exported from "
            "the workbench",
            {"format": TESTS_FORMAT, "contract": contract, "source_classes": classes},
        )
    }
    for corpus in Corpus.objects.filter(decision_type=decision_type).prefetch_related("candidates"):
        files[f"corpora/{file_stem(corpus.name)}.yaml"] = _yaml(
            f"Fixture corpus '{corpus.name}'",
            {"description": corpus.description, "directory": corpus.directory,
             "candidates": [c.data for c in corpus.candidates.all()]},
        )  # fmt: skip
    for scenario in Scenario.objects.filter(decision_type=decision_type).select_related(
        "decision_type", "corpus"
    ):
        files[f"scenarios/{file_stem(scenario.name)}.yaml"] = _yaml(
            f"Scenario '{scenario.name}'", {"name": scenario.name, **_scenario_state(scenario)}
        )
    return files


def write_directory(files: dict[str, str], directory: Path) -> list[Path]:
    written = []
    for relative, text in files.items():
        path = directory / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def zip_bytes(files: dict[str, str], *, root: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for relative, text in sorted(files.items()):
            info = zipfile.ZipInfo(f"{root}/{relative}", date_time=(2000, 1, 1, 0, 0, 0))
            archive.writestr(info, text.encode("utf-8"))
    return buffer.getvalue()


# --------------------------------------------------------------------------- import


@dataclass
class ImportPlan:
    """What importing a directory would change; `sha256` names files + workbench state."""

    decision_type: DecisionType
    contract_changes: list[dict[str, Any]]
    corpora: dict[str, list[str]] = field(default_factory=dict)  # added / replaced / same
    scenarios: dict[str, list[str]] = field(default_factory=dict)
    sha256: str = ""
    _corpora: dict[str, CorpusFile] = field(default_factory=dict, repr=False)
    _scenarios: list[ScenarioFile] = field(default_factory=list, repr=False)

    @property
    def changes_anything(self) -> bool:
        return bool(self.corpora["added"] or self.corpora["replaced"]
                    or self.scenarios["added"] or self.scenarios["replaced"])  # fmt: skip


def _files_of(directory: Path, sub: str) -> list[Path]:
    folder = directory / sub
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.suffix in (".yaml", ".yml", ".json"))


def _scenario_state(scenario: Scenario) -> dict[str, Any]:
    expected: dict[str, Any] = {"slots": dict(scenario.expected_slots)}
    if scenario.expected_admitted is not None:
        expected["admitted"] = list(scenario.expected_admitted)
    if scenario.expected_rejected is not None:
        expected["rejected"] = list(scenario.expected_rejected)
    request = {k: v for k, v in scenario.request_document().items() if v is not None}
    return {"description": scenario.description, "request": request,
            "corpus": file_stem(scenario.corpus.name), "expected": expected}  # fmt: skip


def _scenario_file_state(scenario: ScenarioFile) -> dict[str, Any]:
    expected = scenario.expected.model_dump(exclude_none=True)
    request = {"delegation": None, "named": [], "roles": [], **scenario.request}
    request = {k: v for k, v in request.items() if v is not None}
    return {"description": scenario.description, "request": request,
            "corpus": scenario.corpus, "expected": expected}  # fmt: skip


def import_plan(decision_type: DecisionType, directory: Path) -> ImportPlan:
    """Read and validate `directory`; say what importing it would change. Writes nothing.
    `compiler.contract_tests.InvalidTestFiles` lists every problem of an invalid directory."""
    load_tests(directory)  # every problem of every file, or the whole directory is valid
    header = ContractFile.model_validate(read_document(directory / _contract_name(directory)))
    if header.contract.decision_type != decision_type.key:
        raise ValidationError(
            WRONG_TYPE.format(found=header.contract.decision_type, key=decision_type.key)
        )
    corpora = {p.stem: CorpusFile.model_validate(read_document(p))
               for p in _files_of(directory, "corpora")}  # fmt: skip
    scenarios = [ScenarioFile.model_validate(read_document(p))
                 for p in _files_of(directory, "scenarios")]  # fmt: skip
    version = selectors.current_version(decision_type=decision_type)
    draft = contract_document(version) if version is not None else None
    imported = header.contract.model_dump(mode="json")
    changes = contract_changes(draft, imported) if draft is not None else []
    if draft is not None and _comparable(draft) == _comparable(imported):
        changes = []
    existing_corpora = {file_stem(c.name): c for c in
                        Corpus.objects.filter(decision_type=decision_type).prefetch_related(
                            "candidates")}  # fmt: skip
    plan = ImportPlan(decision_type, changes, _corpora=corpora, _scenarios=scenarios)
    plan.corpora = {"added": [], "replaced": [], "same": []}
    for stem, corpus in corpora.items():
        current = existing_corpora.get(stem)
        if current is None:
            plan.corpora["added"].append(stem)
        elif (current.directory, [c.data for c in current.candidates.all()]) == (
            corpus.directory,
            corpus.candidates,
        ):
            plan.corpora["same"].append(stem)
        else:
            plan.corpora["replaced"].append(stem)
    existing = {s.name: s for s in Scenario.objects.filter(decision_type=decision_type)
                .select_related("decision_type", "corpus")}  # fmt: skip
    plan.scenarios = {"added": [], "replaced": [], "same": []}
    for scenario in scenarios:
        current_scenario = existing.get(scenario.name)
        if current_scenario is None:
            plan.scenarios["added"].append(scenario.name)
        elif _scenario_state(current_scenario) == _scenario_file_state(scenario):
            plan.scenarios["same"].append(scenario.name)
        else:
            plan.scenarios["replaced"].append(scenario.name)
    plan.sha256 = sha256_hex({
        "files": {"contract": imported,
                  "corpora": {k: v.model_dump(mode="json") for k, v in corpora.items()},
                  "scenarios": [s.model_dump(mode="json") for s in scenarios]},
        "draft": draft,
        "corpora": plan.corpora,
        "scenarios": plan.scenarios,
    })  # fmt: skip
    return plan


def _contract_name(directory: Path) -> str:
    for name in ("contract.yaml", "contract.yml", "contract.json"):
        if (directory / name).is_file():
            return name
    return "contract.yaml"


def _comparable(document: dict[str, Any]) -> Any:
    from compiler.models import Contract

    return Contract.model_validate({**document, "version": "-"}).model_dump(mode="json")


@transaction.atomic
def import_apply(*, actor: Actor, decision_type: DecisionType, directory: Path,
                 confirmed_sha256: str) -> ImportPlan:  # fmt: skip
    """Write the plan's corpora and scenarios, if `confirmed_sha256` is still the plan's."""
    plan = import_plan(decision_type, directory)
    if plan.sha256 != confirmed_sha256:
        raise ValidationError(PLAN_STALE)
    corpora: dict[str, Corpus] = {}
    for stem, corpus in plan._corpora.items():
        if stem in plan.corpora["same"]:
            corpora[stem] = Corpus.objects.get(
                decision_type=decision_type, name__in=_names_for(decision_type, stem)
            )
            continue
        corpora[stem] = scenario_services.corpus_import(
            actor=actor, decision_type=decision_type, name=_corpus_name(decision_type, stem),
            document={"directory": corpus.directory, "candidates": corpus.candidates},
            description=corpus.description, replace=True,
        )  # fmt: skip
    for stem in {s.corpus for s in plan._scenarios if s.corpus} - set(corpora):
        corpora[stem] = Corpus.objects.get(
            decision_type=decision_type, name__in=_names_for(decision_type, stem)
        )
    for scenario in plan._scenarios:
        if scenario.name in plan.scenarios["same"]:
            continue
        request = scenario.request
        fields = {
            "principal": request["principal"], "roles": request.get("roles", []),
            "purpose": request["purpose"], "entity": request["entity"],
            "decision_date": dt.date.fromisoformat(str(request["decision_date"])),
            "token_budget": request["token_budget"], "delegation": request.get("delegation"),
            "named": request.get("named", []), "expected_slots": dict(scenario.expected.slots),
            "expected_admitted": scenario.expected.admitted,
            "expected_rejected": scenario.expected.rejected,
            "description": scenario.description,
        }  # fmt: skip
        corpus_row = corpora[scenario.corpus or ""]
        current = Scenario.objects.filter(decision_type=decision_type, name=scenario.name).first()
        if current is None:
            scenario_services.scenario_create(
                actor=actor,
                decision_type=decision_type,
                corpus=corpus_row,
                name=scenario.name,
                **fields,
            )
        else:
            scenario_services.scenario_update(actor=actor, scenario=current, corpus=corpus_row,
                                              **fields)  # fmt: skip
    return plan


def _names_for(decision_type: DecisionType, stem: str) -> list[str]:
    return [c.name for c in Corpus.objects.filter(decision_type=decision_type)
            if file_stem(c.name) == stem]  # fmt: skip


def _corpus_name(decision_type: DecisionType, stem: str) -> str:
    names = _names_for(decision_type, stem)
    return names[0] if names else stem


def plan_lines(plan: ImportPlan) -> list[str]:
    """The plan in sentences, for the command and the page."""
    lines = [f"Contract: {c['text']}" for c in plan.contract_changes] or [
        "Contract: the same as the current draft."]  # fmt: skip
    if plan.contract_changes:
        lines.append("Contract changes are not applied by an import: make them in the editor.")
    for what, groups in (("corpus", plan.corpora), ("scenario", plan.scenarios)):
        for name in groups["added"]:
            lines.append(f"Adds {what} '{name}'.")
        for name in groups["replaced"]:
            lines.append(f"Replaces {what} '{name}'.")
        if groups["same"]:
            lines.append(f"Unchanged {what} file(s): {', '.join(groups['same'])}.")
    return lines


# --------------------------------------------------------------------------- uploads

UPLOAD_MAX_BYTES = 5 * 1024 * 1024
NOT_A_ZIP = "Upload a .zip of a contract test directory (as the export gives)."
UNSAFE_MEMBER = "'{name}' in the zip is not a plain relative path; nothing was read."
TOO_LARGE = "The zip unpacks to more than {limit} bytes; nothing was read."
NO_CONTRACT = "The zip holds no contract.yaml (at its top or in one folder)."


def unpack_zip(data: bytes, into: Path) -> Path:
    """Unpack an uploaded zip into `into` (safely: relative paths only, bounded size) and
    return the directory holding `contract.yaml`."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise ValidationError(NOT_A_ZIP) from None
    with archive:
        members = [m for m in archive.infolist() if not m.is_dir()]
        if sum(m.file_size for m in members) > UPLOAD_MAX_BYTES:
            raise ValidationError(TOO_LARGE.format(limit=UPLOAD_MAX_BYTES))
        for member in members:
            parts = Path(member.filename).parts
            if member.filename.startswith(("/", "\\")) or ".." in parts or not parts:
                raise ValidationError(UNSAFE_MEMBER.format(name=member.filename))
        for member in members:
            target = into / member.filename
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(archive.read(member))
    for candidate in (into, *sorted(p for p in into.iterdir() if p.is_dir())):
        if any((candidate / n).is_file() for n in ("contract.yaml", "contract.yml",
                                                    "contract.json")):  # fmt: skip
            return candidate
    raise ValidationError(NO_CONTRACT)
