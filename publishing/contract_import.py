"""Importing a contract test directory (`compiler_tools._contract_tests`' format) into a decision
type: its contract into the type's draft, its corpora and scenarios into the suite.

Import is two steps, and nothing changes until the second.

`import_plan` reads a directory (validated with `load_tests`: every problem of every file is
listed, nothing is read half) and says what it would change: the contract's differences from
the current draft as the impact report's sentences, and the corpora and scenarios it would
add or replace. A file whose propositions accept a class the catalogue lacks is refused here,
with the field named. When the contract differs and the type has no editable draft (the
latest version is published, or there is none), the plan says so and cannot be confirmed.

`import_apply` is the confirmation. In one transaction it takes the draft's row lock,
refuses with `EditConflict` (`PLAN_STALE`) unless the plan's `sha256` is still what the files
and the workbench give (the draft's lock version is part of it, so any edit of the draft
since the preview makes it stale), makes the draft say what the file says
(`publishing.contract_apply`: edit by edit through the editor's services, each audited), and
writes the corpora and scenarios. Either all of it happens or none.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction

from compiler import Contract, sha256_hex
from compiler_tools import ContractFile, CorpusFile, ScenarioFile, load_tests, read_document
from contracts import selectors
from contracts.documents import contract_document
from contracts.models import ContractVersion, DecisionType
from contracts.services import NOT_ALLOWED, Actor, EditConflict
from scenarios import expectations
from scenarios import services as scenario_services
from scenarios.models import Corpus, Scenario
from scenarios.selectors import known_values

from .contract_apply import apply_contract, check_classes, check_keys
from .contract_files import _scenario_state, file_stem
from .impact import contract_changes

# Messages tests assert on.
WRONG_TYPE = "The files are contract tests of '{found}', not of '{key}'."
PLAN_STALE = (
    "The draft, the suite or the files changed since this plan was shown; nothing was "
    "imported. Read the new plan and confirm again."
)
NO_DRAFT = (
    "The file's contract differs from '{key}'{why}, and there is no editable draft to apply "
    "it to: start a new draft in the editor, then import again. Nothing was imported."
)
NOT_APPLIED = "The draft could not be made to say what the file says; nothing was imported."
APPLIES = (
    "Confirming makes draft version {number} say what the file says (each change made "
    "through the editor, audited)."
)


@dataclass
class ImportPlan:
    """What importing a directory would change; `sha256` names files + workbench state."""

    decision_type: DecisionType
    contract_changes: list[dict[str, Any]]
    corpora: dict[str, list[str]] = field(default_factory=dict)  # added / replaced / same
    scenarios: dict[str, list[str]] = field(default_factory=dict)
    sha256: str = ""
    draft_number: int | None = None  # the editable draft the contract changes go to
    refusal: str = ""  # why confirming is refused (no editable draft), else empty
    _contract: dict[str, Any] = field(default_factory=dict, repr=False)
    _corpora: dict[str, CorpusFile] = field(default_factory=dict, repr=False)
    _scenarios: list[ScenarioFile] = field(default_factory=list, repr=False)

    @property
    def changes_anything(self) -> bool:
        return bool(self.contract_changes
                    or self.corpora["added"] or self.corpora["replaced"]
                    or self.scenarios["added"] or self.scenarios["replaced"])  # fmt: skip

    @property
    def confirmable(self) -> bool:
        return self.changes_anything and not self.refusal


def _files_of(directory: Path, sub: str) -> list[Path]:
    folder = directory / sub
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.suffix in (".yaml", ".yml", ".json"))


def _scenario_file_state(scenario: ScenarioFile) -> dict[str, Any]:
    # What the file checks, as an export of the scenario it would make writes it.
    expected = expectations.normalised(scenario.expected.model_dump())
    request = {"delegation": None, "named": [], "roles": [], **scenario.request}
    request = {k: v for k, v in request.items() if v is not None}
    return {"description": scenario.description, "request": request,
            "corpus": scenario.corpus, "expected": expected}  # fmt: skip


def _contract_name(directory: Path) -> str:
    for name in ("contract.yaml", "contract.yml", "contract.json"):
        if (directory / name).is_file():
            return name
    return "contract.yaml"


def _comparable(document: dict[str, Any]) -> Any:
    """The document as the compiler reads it (defaults filled in), whatever its number."""
    return Contract.model_validate({**document, "version": "-"}).model_dump(mode="json")


def import_plan(decision_type: DecisionType, directory: Path) -> ImportPlan:
    """Read and validate `directory`; say what importing it would change. Writes nothing.
    `compiler_tools.InvalidTestFiles` lists every problem of an invalid directory."""
    load_tests(directory)  # every problem of every file, or the whole directory is valid
    contract_name = _contract_name(directory)
    header = ContractFile.model_validate(read_document(directory / contract_name))
    if header.contract.decision_type != decision_type.key:
        raise ValidationError(
            WRONG_TYPE.format(found=header.contract.decision_type, key=decision_type.key)
        )
    corpora = {p.stem: CorpusFile.model_validate(read_document(p))
               for p in _files_of(directory, "corpora")}  # fmt: skip
    paths = _files_of(directory, "scenarios")
    scenarios = [ScenarioFile.model_validate(read_document(p)) for p in paths]
    version = selectors.current_version(decision_type=decision_type)
    draft = contract_document(version) if version is not None else None
    imported = header.contract.model_dump(mode="json")
    check_keys(imported, file=contract_name)
    check_classes(imported, draft, file=contract_name)
    _check_pins(decision_type, imported, dict(zip(paths, scenarios, strict=True)))
    same = draft is not None and _comparable(draft) == _comparable(imported)
    changes = [] if same or draft is None else contract_changes(draft, imported)
    plan = ImportPlan(decision_type, changes, _contract=imported, _corpora=corpora,
                      _scenarios=scenarios)  # fmt: skip
    if not same:
        if version is not None and version.accepts_edits:
            plan.draft_number = version.number
        else:
            why = (f" (version {version.number} is {version.get_status_display().lower()})"
                   if version is not None else " (it has no version yet)")  # fmt: skip
            plan.refusal = NO_DRAFT.format(key=decision_type.key, why=why)
            if draft is None:
                plan.contract_changes = contract_changes(None, imported)
    _plan_suite(plan, decision_type)
    plan.sha256 = sha256_hex({
        "files": {"contract": imported,
                  "corpora": {k: v.model_dump(mode="json") for k, v in corpora.items()},
                  "scenarios": [s.model_dump(mode="json") for s in scenarios]},
        "draft": draft,
        "draft_lock": None if version is None else [version.pk, version.lock_version],
        "corpora": plan.corpora,
        "scenarios": plan.scenarios,
    })  # fmt: skip
    return plan


PIN_PROBLEM = "scenarios/{file}: {problem}"


def _check_pins(
    decision_type: DecisionType, imported: dict[str, Any], files: dict[Path, ScenarioFile]
) -> None:
    """Each scenario file's pins as the scenario services will check them once confirmed
    (`scenarios.expectations.clean_pins`), refused here with the file named, so a plan that
    shows is a plan that applies: a pin may name a proposition of the file's contract or of
    any version of the type."""
    known = set(known_values(decision_type=decision_type).propositions)
    known |= {p["key"] for p in imported["propositions"]}
    for path, scenario in files.items():
        fields = expectations.scenario_fields(scenario.expected.model_dump())
        try:
            expectations.clean_pins(fields, known)
        except ValidationError as exc:
            problems = [PIN_PROBLEM.format(file=path.name, problem=m) for m in exc.messages]
            raise ValidationError(problems) from None


def _plan_suite(plan: ImportPlan, decision_type: DecisionType) -> None:
    existing_corpora = {file_stem(c.name): c for c in
                        Corpus.objects.filter(decision_type=decision_type).prefetch_related(
                            "candidates")}  # fmt: skip
    plan.corpora = {"added": [], "replaced": [], "same": []}
    for stem, corpus in plan._corpora.items():
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
    for scenario in plan._scenarios:
        current_scenario = existing.get(scenario.name)
        if current_scenario is None:
            plan.scenarios["added"].append(scenario.name)
        elif _scenario_state(current_scenario) == _scenario_file_state(scenario):
            plan.scenarios["same"].append(scenario.name)
        else:
            plan.scenarios["replaced"].append(scenario.name)


@transaction.atomic
def import_apply(*, actor: Actor, decision_type: DecisionType, directory: Path,
                 confirmed_sha256: str) -> ImportPlan:  # fmt: skip
    """Apply the plan `confirmed_sha256` names: the draft's contract, then the corpora and
    scenarios. `EditConflict` if it is no longer the plan; `ValidationError` (nothing
    written) if it cannot be confirmed; `PermissionDenied` unless `actor` may edit the type."""
    if not selectors.can_edit(user=actor, decision_type=decision_type):
        raise PermissionDenied(NOT_ALLOWED)
    version = selectors.current_version(decision_type=decision_type)
    if version is not None:  # held until the import commits: no edit can slip in between
        version = ContractVersion.objects.select_for_update(of=("self",)).get(pk=version.pk)
    plan = import_plan(decision_type, directory)
    locked_another = version is not None and plan.draft_number not in (None, version.number)
    if plan.sha256 != confirmed_sha256 or locked_another:  # (a draft started meanwhile)
        raise EditConflict(PLAN_STALE)
    if plan.refusal:
        raise ValidationError(plan.refusal)
    if plan.draft_number is not None and version is not None:
        apply_contract(actor=actor, version=version, target=plan._contract)
        version.refresh_from_db()
        if _comparable(contract_document(version)) != _comparable(plan._contract):
            raise ValidationError(NOT_APPLIED)  # a guard: the transaction undoes every edit
    _write_suite(actor, decision_type, plan)
    return plan


def _write_suite(actor: Actor, decision_type: DecisionType, plan: ImportPlan) -> None:
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
            "named": request.get("named", []),
            **expectations.scenario_fields(scenario.expected.model_dump()),
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
    if plan.refusal:
        lines.append(plan.refusal)
    elif plan.draft_number is not None:
        lines.append(APPLIES.format(number=plan.draft_number))
    for what, groups in (("corpus", plan.corpora), ("scenario", plan.scenarios)):
        for name in groups["added"]:
            lines.append(f"Adds {what} '{name}'.")
        for name in groups["replaced"]:
            lines.append(f"Replaces {what} '{name}'.")
        if groups["same"]:
            lines.append(f"Unchanged {what} file(s): {', '.join(groups['same'])}.")
    return lines
