"""Every write to fixtures, scenarios and runs. Views, commands, the task and tests call these.

Like `contracts.services`: keyword-only arguments, the actor's permission on the decision type
checked first, one audit event per change (through the contracts audit service), one
transaction. Editing corpora and scenarios needs the owner's `change_decisiontype`; starting a
run needs that or the reviewer's `review_decisiontype` (a reviewer runs the suite to judge a
version). Problems a person can fix are raised as `ValidationError` with the messages below.

Optimistic locking, as in the contract editor: a scenario and a candidate each carry a
`lock_version`; an edit passes the value its form was opened with (`expected_lock_version`),
the row is locked (`select_for_update`), a stale value raises `contracts.services.EditConflict`
and changes nothing, otherwise the change is applied and the counter incremented.
`expected_lock_version=None` skips the comparison (commands and code that hold no form) but
still increments the counter, so every open form goes stale.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import time
import traceback
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import connection, transaction
from django.db.models import F, Max
from django.utils import timezone
from pydantic import ValidationError as PydanticValidationError

from compiler import InvalidInput
from compiler.models import Candidate, Delegation
from contracts import roles
from contracts.documents import ContractInvalid, compiled_contract, document_sha256
from contracts.models import ContractVersion, DecisionType, SourceClass
from contracts.services import Actor, EditConflict, audit_record

from . import compiling, selectors
from .models import Corpus, CorpusCandidate, Scenario, ScenarioResult, SuiteRun

# Messages tests assert on.
NOT_ALLOWED = "You are not allowed to do this."
DUPLICATE_CORPUS = "This decision type already has a corpus named '{name}'."
DUPLICATE_SCENARIO = "This decision type already has a scenario named '{name}'."
DUPLICATE_CANDIDATE = "This corpus already has a candidate '{id}'."
MISSING_DEPENDENCY = "'{ref}' is not a candidate of this corpus."
CANDIDATE_IN_USE = "'{id}' is named by other candidates ({users}); change them first."
WRONG_CORPUS = "That corpus belongs to another decision type."
WRONG_VERSION = "That version belongs to another decision type."
UNKNOWN_STATE = "'{state}' is not a slot state; use supported, contradicted, unknown or refused."
NO_SCENARIOS = "There are no scenarios to run."
CONTRACT_INVALID = "Version {number} is not a valid contract: {problems}"
ID_TOO_LONG = "An id is at most {limit} characters; this one has {length}."
CONTROL_CHARACTER = "A name cannot contain control characters such as a line break or a tab."
UNKNOWN_CLASS = (
    "'{value}' is not in the source-class catalogue: check the spelling, or add the class."
)
RETIRED_CLASS = "'{value}' is a retired source class: no system produces it any more."
UNKNOWN_PROPOSITION = "'{value}' is not a proposition of any version of this decision type."
UNKNOWN_ID = "{field}: '{value}' is not a candidate of corpus '{corpus}'."
STALE_SCENARIO = (
    "Someone else saved this scenario since you opened it; nothing was saved — "
    "reload to see their version."
)
STALE_CANDIDATE = (
    "Someone else saved this candidate since you opened it; nothing was saved — "
    "reload to see their version."
)

RUN_STOPPED = (
    "The worker running this run stopped (no heartbeat since {heartbeat}) after it had been "
    "requeued {requeues} times; it was not requeued again. Start a new run."
)
# A run whose worker stops is requeued this many times, then failed with RUN_STOPPED.
MAX_REQUEUES = 2

logger = logging.getLogger(__name__)

SLOT_STATES = ("supported", "contradicted", "unknown", compiling.REFUSED)


class Action:
    """Audit actions of this app (AuditEvent.action is a plain string)."""

    CORPUS_IMPORTED = "corpus.imported"
    CANDIDATE_SAVED = "corpus.candidate_saved"
    SCENARIO_CREATED = "scenario.created"
    SCENARIO_UPDATED = "scenario.updated"
    EXPECTATIONS_TAKEN = "scenario.expectations_taken"
    RUN_STARTED = "run.started"
    RUN_REQUEUED = "run.requeued"
    RUN_FINISHED = "run.finished"
    RUN_FAILED = "run.failed"


# --------------------------------------------------------------------------- permissions


def can_edit(actor: Actor, decision_type: DecisionType) -> bool:
    return actor.is_authenticated and actor.has_perm(f"contracts.{roles.EDIT}", decision_type)


def can_run(actor: Actor, decision_type: DecisionType) -> bool:
    return can_edit(actor, decision_type) or (
        actor.is_authenticated and actor.has_perm(f"contracts.{roles.REVIEW}", decision_type)
    )


def _require_edit(actor: Actor, decision_type: DecisionType) -> None:
    if not can_edit(actor, decision_type):
        raise PermissionDenied(NOT_ALLOWED)


def _check_lock(row: Scenario | CorpusCandidate, expected: int | None, message: str) -> None:
    """Refuse an edit based on an older revision of a row locked with select_for_update."""
    if expected is not None and row.lock_version != expected:
        raise EditConflict(message)


# --------------------------------------------------------------------------- corpora


@transaction.atomic
def corpus_import(
    *,
    actor: Actor,
    decision_type: DecisionType,
    name: str,
    document: Any,
    description: str = "",
    replace: bool = False,
    strict: bool = False,
) -> Corpus:
    """Create a corpus from a JSON document, or replace an existing one's content.

    Every invalid item is reported at once (`compiling.CorpusInvalid`); nothing is saved then.
    Values the compiler accepts but this workbench does not know (a class outside the
    catalogue, a proposition no version has) are returned as `corpus.warnings`; with `strict`
    they are problems like the rest and nothing is saved.
    """
    _require_edit(actor, decision_type)
    if has_control_character(name):
        raise ValidationError({"name": CONTROL_CHARACTER})
    try:
        valid = compiling.validate_corpus(document)
    except compiling.CorpusInvalid as exc:
        raise compiling.CorpusInvalid(exc.problems + _long_ids(document)) from None
    too_long = _long_ids(document)
    if too_long:
        raise compiling.CorpusInvalid(too_long)
    known = selectors.known_values(decision_type=decision_type)
    warnings = [
        warning
        for index, data in enumerate(valid.candidates)
        for warning in candidate_warnings(known, data, index=index)
    ]
    if strict and warnings:
        raise compiling.CorpusInvalid(warnings)
    corpus = Corpus.objects.select_for_update().filter(decision_type=decision_type, name=name)
    existing = corpus.first()
    old_locks: dict[str, int] = {}
    if existing is not None and not replace:
        raise ValidationError({"name": DUPLICATE_CORPUS.format(name=name)})
    if existing is None:
        corpus_row = Corpus(
            decision_type=decision_type, name=name, description=description, created_by=actor
        )
        corpus_row.full_clean(exclude=["created_by", "decision_type"], validate_unique=False)
    else:
        corpus_row = existing
        # The rows are replaced: carry each id's counter on, so an edit form opened before
        # the import is stale rather than matching a fresh row's 0.
        old_locks = dict(corpus_row.candidates.values_list("candidate_id", "lock_version"))
        corpus_row.candidates.all().delete()
        if description:
            corpus_row.description = description
    corpus_row.directory = valid.directory
    corpus_row.save()
    CorpusCandidate.objects.bulk_create(
        CorpusCandidate(
            corpus=corpus_row,
            position=i,
            candidate_id=data["id"],
            data=data,
            lock_version=old_locks[data["id"]] + 1 if data["id"] in old_locks else 0,
        )
        for i, data in enumerate(valid.candidates)
    )
    audit_record(
        actor=actor,
        action=Action.CORPUS_IMPORTED,
        summary=f"Imported {len(valid.candidates)} candidates into corpus '{name}'",
        decision_type=decision_type,
        changes={"corpus": name, "candidates": len(valid.candidates), "replaced": bool(existing)},
    )
    corpus_row.warnings = warnings
    return corpus_row


def candidate_warnings(
    known: selectors.KnownValues, data: Mapping[str, Any], *, index: int | None = None
) -> list[compiling.CorpusProblem]:
    """What in one candidate (the compiler's JSON) the catalogue and contract do not know."""
    prefix: tuple[str | int, ...] = ("candidates", index) if index is not None else ()
    found = []

    def warn(loc: tuple[str | int, ...], message: str, value: str) -> None:
        found.append(
            compiling.CorpusProblem(
                loc=(*prefix, *loc), msg=message.format(value=value), candidate_id=data.get("id")
            )
        )

    value = data.get("evidence_class")
    if value in known.retired_classes:
        warn(("evidence_class",), RETIRED_CLASS, value)
    elif value not in known.evidence_classes:
        warn(("evidence_class",), UNKNOWN_CLASS, value)
    if known.has_contract:
        for field in ("supports", "contradicts"):
            for position, key in enumerate(data.get(field, ())):
                if key not in known.propositions:
                    warn((field, position), UNKNOWN_PROPOSITION, key)
    return found


CANDIDATE_ID_LIMIT = CorpusCandidate._meta.get_field("candidate_id").max_length


def has_control_character(text: str) -> bool:
    return any(unicodedata.category(char) == "Cc" for char in text)


def _long_ids(document: Any) -> list[compiling.CorpusProblem]:
    """Ids the compiler accepts but the candidate table cannot hold (PostgreSQL would refuse
    the whole import with a DataError; SQLite would keep them)."""
    items = document.get("candidates") if isinstance(document, Mapping) else None
    return [
        compiling.CorpusProblem(
            loc=("candidates", index, "id"),
            msg=ID_TOO_LONG.format(limit=CANDIDATE_ID_LIMIT, length=len(item["id"])),
            candidate_id=item["id"],
        )
        for index, item in enumerate(items if isinstance(items, list) else [])
        if isinstance(item, Mapping)
        and isinstance(item.get("id"), str)
        and len(item["id"]) > CANDIDATE_ID_LIMIT
    ]


# The candidate's consistency rules (`compiler.models.Candidate._consistent`) raise without a
# location; the field each message is about, by how the message starts.
CONSISTENCY_FIELDS = (
    ("valid_to", "valid_to"),
    ("two forms", "forms"),
    ("floor", "floor"),
    ("group_required", "group_required"),
    ("a candidate cannot depend", "depends_on"),
)


def _consistency_field(msg: str) -> str:
    return next((field for start, field in CONSISTENCY_FIELDS if msg.startswith(start)), "__all__")


def _located(loc: tuple[Any, ...], msg: str) -> str:
    return f"{'.'.join(map(str, loc))}: {msg}" if loc else msg


def _validation_error(exc: PydanticValidationError) -> ValidationError:
    by_field: dict[str, list[str]] = {}
    for error in exc.errors():
        loc = error["loc"]
        msg = error["msg"].removeprefix("Value error, ")
        key = str(loc[0]) if loc else _consistency_field(msg)
        by_field.setdefault(key, []).append(
            msg + (f" ({'.'.join(map(str, loc[1:]))})" if len(loc) > 1 else "")
        )
    return ValidationError(by_field)


@transaction.atomic
def candidate_save(
    *,
    actor: Actor,
    corpus: Corpus,
    data: Mapping[str, Any],
    original_id: str | None = None,
    expected_lock_version: int | None = None,
) -> CorpusCandidate:
    """Add one candidate, or replace the one stored as `original_id` (which may be renamed).

    Replacing one refuses a stale `expected_lock_version` with `EditConflict`; the corpus row
    is locked, which serialises every edit of its candidates."""
    corpus = Corpus.objects.select_for_update().select_related("decision_type").get(pk=corpus.pk)
    _require_edit(actor, corpus.decision_type)
    try:
        candidate = Candidate.model_validate(dict(data))
    except PydanticValidationError as exc:
        raise _validation_error(exc) from None
    if len(candidate.id) > CANDIDATE_ID_LIMIT:
        raise ValidationError(
            {"id": ID_TOO_LONG.format(limit=CANDIDATE_ID_LIMIT, length=len(candidate.id))}
        )
    unstorable = compiling.unstorable_values(compiling.candidate_json(candidate))
    if unstorable:
        raise ValidationError({str(p.loc[0]): _located(p.loc[1:], p.msg) for p in unstorable})
    rows = {row.candidate_id: row for row in corpus.candidates.all()}
    current = rows.get(original_id) if original_id is not None else None
    if original_id is not None and current is None:
        raise ValidationError({"id": f"'{original_id}' is no longer in this corpus."})
    if current is not None:
        _check_lock(current, expected_lock_version, STALE_CANDIDATE)
    if candidate.id in rows and rows[candidate.id] is not current:
        raise ValidationError({"id": DUPLICATE_CANDIDATE.format(id=candidate.id)})
    others = set(rows) - {original_id}
    for ref in (*candidate.depends_on, *filter(None, [candidate.superseded_by])):
        if ref not in others:
            field = "depends_on" if ref in candidate.depends_on else "superseded_by"
            raise ValidationError({field: MISSING_DEPENDENCY.format(ref=ref)})
    if current is not None and candidate.id != original_id:
        users = sorted(
            row.candidate_id
            for row in rows.values()
            if original_id in row.data.get("depends_on", ())
            or row.data.get("superseded_by") == original_id
        )
        if users:
            raise ValidationError(
                {"id": CANDIDATE_IN_USE.format(id=original_id, users=", ".join(users))}
            )
    stored = compiling.candidate_json(candidate)
    if current is None:
        position = (corpus.candidates.aggregate(p=Max("position"))["p"] or 0) + 1
        current = CorpusCandidate(corpus=corpus, position=position)
        before = None
    else:
        before = current.data
        current.lock_version += 1
    current.candidate_id, current.data = candidate.id, stored
    current.save()
    current.warnings = candidate_warnings(
        selectors.known_values(decision_type=corpus.decision_type), stored
    )
    corpus.save(update_fields=["updated_at"])
    audit_record(
        actor=actor,
        action=Action.CANDIDATE_SAVED,
        summary=f"{'Added' if before is None else 'Changed'} candidate '{candidate.id}' "
        f"in corpus '{corpus.name}'",
        decision_type=corpus.decision_type,
        changes={"corpus": corpus.name, "before": before, "after": stored},
    )
    return current


# --------------------------------------------------------------------------- scenarios


def _clean_scenario_fields(
    decision_type: DecisionType, corpus: Corpus, fields: dict[str, Any]
) -> dict[str, Any]:
    if corpus.decision_type_id != decision_type.pk:
        raise ValidationError({"corpus": WRONG_CORPUS})
    delegation = fields.get("delegation")
    if delegation:
        try:
            fields["delegation"] = Delegation.model_validate(delegation).model_dump(mode="json")
        except PydanticValidationError as exc:
            raise ValidationError(
                {"delegation": [_located(e["loc"], e["msg"]) for e in exc.errors()]}
            ) from None
        unstorable = compiling.unstorable_values(fields["delegation"])
        if unstorable:
            raise ValidationError({"delegation": [_located(p.loc, p.msg) for p in unstorable]})
    else:
        fields["delegation"] = None
    for key, state in (fields.get("expected_slots") or {}).items():
        if state not in SLOT_STATES:
            raise ValidationError({"expected_slots": UNKNOWN_STATE.format(state=state)})
        if not isinstance(key, str) or not key:
            raise ValidationError({"expected_slots": "Name each proposition."})
    fields["roles"] = list(dict.fromkeys(fields.get("roles") or []))
    fields["named"] = list(fields.get("named") or [])
    fields["expected_slots"] = dict(fields.get("expected_slots") or {})
    problems = {
        name: [_located(p.loc, p.msg) for p in compiling.unstorable_values(value)]
        for name, value in fields.items()
        if name != "delegation"
    }
    problems = {name: messages for name, messages in problems.items() if messages}
    if problems:
        raise ValidationError(problems)
    return fields


def scenario_warnings(scenario: Scenario) -> list[str]:
    """Ids the scenario names or expects that its corpus does not hold (a typo, or a
    candidate renamed since): such an expectation can never be met."""
    ids = set(scenario.corpus.candidates.values_list("candidate_id", flat=True))
    return [
        UNKNOWN_ID.format(field=field, value=value, corpus=scenario.corpus.name)
        for field in ("named", "expected_admitted", "expected_rejected")
        for value in getattr(scenario, field) or ()
        if value not in ids
    ]


# The fields a scenario's form edits directly: its name and the request it compiles.
SCENARIO_REQUEST_FIELDS = (
    "name",
    "description",
    "principal",
    "roles",
    "purpose",
    "entity",
    "decision_date",
    "token_budget",
    "delegation",
    "named",
)
SCENARIO_FIELDS = (
    *SCENARIO_REQUEST_FIELDS,
    "expected_slots",
    "expected_admitted",
    "expected_rejected",
)


def _scenario_state(scenario: Scenario) -> dict[str, Any]:
    state = {f: getattr(scenario, f) for f in SCENARIO_FIELDS}
    state["decision_date"] = scenario.decision_date.isoformat()
    state["corpus"] = scenario.corpus.name
    return state


@transaction.atomic
def scenario_create(
    *,
    actor: Actor,
    decision_type: DecisionType,
    corpus: Corpus,
    name: str,
    principal: str,
    roles: Sequence[str],
    purpose: str,
    entity: str,
    decision_date: dt.date,
    token_budget: int,
    delegation: Mapping[str, Any] | None = None,
    named: Sequence[str] = (),
    expected_slots: Mapping[str, str] | None = None,
    expected_admitted: Sequence[str] | None = None,
    expected_rejected: Sequence[str] | None = None,
    description: str = "",
) -> Scenario:
    _require_edit(actor, decision_type)
    fields = _clean_scenario_fields(
        decision_type,
        corpus,
        {
            "name": name,
            "description": description,
            "principal": principal,
            "roles": roles,
            "purpose": purpose,
            "entity": entity,
            "decision_date": decision_date,
            "token_budget": token_budget,
            "delegation": delegation,
            "named": named,
            "expected_slots": expected_slots,
            "expected_admitted": list(expected_admitted) if expected_admitted is not None else None,
            "expected_rejected": list(expected_rejected) if expected_rejected is not None else None,
        },
    )
    if Scenario.objects.filter(decision_type=decision_type, name=name).exists():
        raise ValidationError({"name": DUPLICATE_SCENARIO.format(name=name)})
    position = (decision_type.scenarios.aggregate(p=Max("position"))["p"] or 0) + 1
    scenario = Scenario(
        decision_type=decision_type, corpus=corpus, created_by=actor, position=position, **fields
    )
    scenario.full_clean(exclude=["created_by", "decision_type", "corpus"], validate_unique=False)
    scenario.save()
    audit_record(
        actor=actor,
        action=Action.SCENARIO_CREATED,
        summary=f"Created scenario '{name}'",
        decision_type=decision_type,
        changes={"after": _scenario_state(scenario)},
    )
    return scenario


@transaction.atomic
def scenario_update(
    *,
    actor: Actor,
    scenario: Scenario,
    corpus: Corpus,
    expected_lock_version: int | None = None,
    **changes: Any,
) -> Scenario:
    """Change any of `SCENARIO_FIELDS` (and the corpus); a stale `expected_lock_version`
    raises `EditConflict` and changes nothing."""
    current = (
        Scenario.objects.select_for_update()
        .select_related("decision_type", "corpus")
        .get(pk=scenario.pk)
    )
    _require_edit(actor, current.decision_type)
    _check_lock(current, expected_lock_version, STALE_SCENARIO)
    unknown = set(changes) - set(SCENARIO_FIELDS)
    if unknown:
        raise TypeError(f"unknown scenario fields: {sorted(unknown)}")
    before = _scenario_state(current)
    fields = {f: getattr(current, f) for f in SCENARIO_FIELDS} | changes
    fields = _clean_scenario_fields(current.decision_type, corpus, fields)
    name = fields["name"]
    taken = Scenario.objects.filter(decision_type=current.decision_type, name=name)
    if taken.exclude(pk=current.pk).exists():
        raise ValidationError({"name": DUPLICATE_SCENARIO.format(name=name)})
    for key, value in fields.items():
        setattr(current, key, value)
    current.corpus = corpus
    current.full_clean(exclude=["created_by", "decision_type", "corpus"], validate_unique=False)
    current.lock_version += 1
    current.save()
    audit_record(
        actor=actor,
        action=Action.SCENARIO_UPDATED,
        summary=f"Updated scenario '{name}'",
        decision_type=current.decision_type,
        changes={"before": before, "after": _scenario_state(current)},
    )
    return current


@transaction.atomic
def scenario_take_expected(
    *,
    actor: Actor,
    scenario: Scenario,
    expectations: Mapping[str, Any],
    version: ContractVersion,
    expected_lock_version: int | None = None,
) -> Scenario:
    """Make the expectations those of a compile the person has just seen (see
    `selectors.expectation_preview`). Admitted/rejected ids are taken only when the
    scenario already checks them. A stale `expected_lock_version` (the scenario was saved
    since the page was shown) raises `EditConflict` and changes nothing."""
    current = (
        Scenario.objects.select_for_update().select_related("decision_type").get(pk=scenario.pk)
    )
    _require_edit(actor, current.decision_type)
    _check_lock(current, expected_lock_version, STALE_SCENARIO)
    before = {
        "expected_slots": current.expected_slots,
        "expected_admitted": current.expected_admitted,
        "expected_rejected": current.expected_rejected,
    }
    current.expected_slots = dict(expectations["expected_slots"])
    if current.expected_admitted is not None:
        current.expected_admitted = list(expectations["expected_admitted"])
    if current.expected_rejected is not None:
        current.expected_rejected = list(expectations["expected_rejected"])
    current.lock_version += 1
    current.save(
        update_fields=[
            "expected_slots",
            "expected_admitted",
            "expected_rejected",
            "lock_version",
            "updated_at",
        ]
    )
    audit_record(
        actor=actor,
        action=Action.EXPECTATIONS_TAKEN,
        summary=f"Took the result against version {version.number} as expected for "
        f"'{current.name}'",
        decision_type=current.decision_type,
        version=version,
        changes={
            "before": before,
            "after": {
                "expected_slots": current.expected_slots,
                "expected_admitted": current.expected_admitted,
                "expected_rejected": current.expected_rejected,
            },
        },
    )
    return current


# --------------------------------------------------------------------------- runs


def weak_classes() -> list[str]:
    """The catalogue's weak source classes: what `substitute_class` perturbations use first."""
    return list(SourceClass.objects.filter(weak=True).order_by("key").values_list("key", flat=True))


def run_start(
    *,
    actor: Actor,
    version: ContractVersion,
    scenario: Scenario | None = None,
    background: bool = True,
) -> SuiteRun:
    """Start a run of the suite (or one scenario) against `version`.

    In the background (the default) the run is queued for the worker: the task is enqueued in
    the same transaction as the run, so the worker sees both together (with the immediate
    backend, in tests, the run has finished when this returns). `background=False` compiles
    here and now, as `manage.py run_scenarios` does.
    """
    run = _run_create(actor=actor, version=version, scenario=scenario, enqueue=background)
    if not background:
        run = run_execute(run_id=run.pk)
    return run


@transaction.atomic
def _run_create(
    *, actor: Actor, version: ContractVersion, scenario: Scenario | None, enqueue: bool
) -> SuiteRun:
    decision_type = version.decision_type
    if not can_run(actor, decision_type):
        raise PermissionDenied(NOT_ALLOWED)
    if scenario is not None and scenario.decision_type_id != decision_type.pk:
        raise ValidationError({"version": WRONG_VERSION})
    total = 1 if scenario is not None else decision_type.scenarios.count()
    if total == 0:
        raise ValidationError(NO_SCENARIOS)
    run = SuiteRun.objects.create(
        decision_type=decision_type,
        version=version,
        scenario=scenario,
        total=total,
        created_by=actor,
        weak_classes=weak_classes(),
    )
    audit_record(
        actor=actor,
        action=Action.RUN_STARTED,
        summary=f"Started a run of {scenario.name if scenario else f'{total} scenarios'} "
        f"against version {version.number}",
        version=version,
        changes={"run": run.pk, "scenarios": total},
    )
    if enqueue:
        _enqueue(run)
    run.refresh_from_db()
    return run


class RunSuperseded(Exception):
    """This worker's claim on a run is gone: it was requeued while this worker still ran
    (a heartbeat came too late), and another worker now owns it."""


def _heartbeat_seconds() -> float:
    return settings.SUITE_RUN_HEARTBEAT_SECONDS


def run_execute(*, run_id: int) -> SuiteRun:
    """Compile every scenario of the run, committing results, progress and a heartbeat about
    every `SUITE_RUN_HEARTBEAT_SECONDS` so the progress bar moves and a stopped worker shows;
    a requeued run resumes after the scenarios whose results are already stored. The worker
    (or the immediate backend) calls this."""
    run = SuiteRun.objects.select_related("version__decision_type", "scenario").get(pk=run_id)
    # Claim the run: only a queued run starts, and only once, whoever else holds its task.
    now = timezone.now()
    claimed = SuiteRun.objects.filter(pk=run.pk, status=SuiteRun.Status.QUEUED).update(
        status=SuiteRun.Status.RUNNING,
        started_at=run.started_at or now,
        heartbeat_at=now,
    )
    if not claimed:
        return run
    run.refresh_from_db()
    claim = _RunClaim(run)
    started = time.perf_counter()
    writer = _ResultWriter()
    try:
        summary, contract_sha256 = _compile_run(run, writer, claim)
        summary["seconds"] = round(time.perf_counter() - started, 3)
        summary["compiles_per_second"] = (
            round(summary["compiles"] / summary["seconds"], 1) if summary["seconds"] else None
        )
        # The last results land with the outcome: one commit, one disk sync.
        with transaction.atomic():
            claim.update(
                status=SuiteRun.Status.FINISHED,
                finished_at=timezone.now(),
                contract_sha256=contract_sha256,
                summary=summary,
                done=F("total"),
            )
            writer.flush()
            audit_record(
                actor=None,
                action=Action.RUN_FINISHED,
                summary=f"Run {run.pk} finished: {summary['failures']} expectation failures, "
                f"{summary['flipped_slots']} flipped slots",
                version=run.version,
                changes={"run": run.pk, **summary},
            )
    except RunSuperseded:
        logger.warning("Run %s was requeued while this worker ran it; leaving it.", run.pk)
    except Exception as exc:  # the run records why it failed; the worker keeps going
        with contextlib.suppress(RunSuperseded):  # requeued meanwhile: not ours to fail
            claim.update(
                status=SuiteRun.Status.FAILED, finished_at=timezone.now(), error=_describe(exc)
            )
    run.refresh_from_db()
    return run


class _RunClaim:
    """Writes to a run this worker executes, only while it is still this worker's: the
    requeue count it was claimed under is unchanged and it is still running. Each write is
    also a heartbeat."""

    def __init__(self, run: SuiteRun) -> None:
        self.pk, self.attempt = run.pk, run.requeues

    def update(self, **fields: Any) -> None:
        updated = SuiteRun.objects.filter(
            pk=self.pk, requeues=self.attempt, status=SuiteRun.Status.RUNNING
        ).update(heartbeat_at=timezone.now(), **fields)
        if not updated:
            raise RunSuperseded(self.pk)


def runs_requeue_stale() -> list[SuiteRun]:
    """Requeue every running run whose worker stopped beating (see `run_requeue_if_stale`);
    the worker does this as it starts, `manage.py requeue_stale_runs` on demand. The runs
    requeued or failed."""
    cutoff = _stale_cutoff()
    stale = SuiteRun.objects.filter(status=SuiteRun.Status.RUNNING, heartbeat_at__lt=cutoff)
    recovered = (run_requeue_if_stale(run_id=pk) for pk in stale.values_list("pk", flat=True))
    return [run for run in recovered if run is not None]


def run_requeue_if_stale(*, run_id: int) -> SuiteRun | None:
    """If the run is running but its heartbeat is older than `SUITE_RUN_STALE_SECONDS` (its
    worker was killed, say), queue it again for a worker to resume after the scenarios it
    stored; after `MAX_REQUEUES` requeues, fail it with `RUN_STOPPED` instead. The run if it
    was stale, else None. The run page calls this as it is viewed."""
    with transaction.atomic():
        run = (
            SuiteRun.objects.select_for_update()
            .filter(pk=run_id, status=SuiteRun.Status.RUNNING, heartbeat_at__lt=_stale_cutoff())
            .select_related("version")
            .first()
        )
        if run is None:
            return None
        if run.requeues >= MAX_REQUEUES:
            run.status, run.finished_at = SuiteRun.Status.FAILED, timezone.now()
            run.error = RUN_STOPPED.format(
                heartbeat=timezone.localtime(run.heartbeat_at).strftime("%H:%M:%S"),
                requeues=run.requeues,
            )
            run.save(update_fields=["status", "finished_at", "error"])
            action, summary = Action.RUN_FAILED, f"Run {run.pk} failed: {run.error}"
        else:
            run.status, run.requeues = SuiteRun.Status.QUEUED, run.requeues + 1
            run.requeued_at, run.resumed_from = timezone.now(), run.done
            run.save(update_fields=["status", "requeues", "requeued_at", "resumed_from"])
            action = Action.RUN_REQUEUED
            summary = (
                f"Requeued run {run.pk} (its worker stopped) after {run.done} of "
                f"{run.total} scenarios"
            )
        audit_record(
            actor=None,
            action=action,
            summary=summary,
            version=run.version,
            changes={"run": run.pk, "done": run.done, "requeues": run.requeues},
        )
        if run.status == SuiteRun.Status.QUEUED:
            _enqueue(run)
    run.refresh_from_db()
    return run


def _stale_cutoff() -> dt.datetime:
    return timezone.now() - dt.timedelta(seconds=settings.SUITE_RUN_STALE_SECONDS)


def _enqueue(run: SuiteRun) -> None:
    """Queue the run's task in the caller's transaction, so a worker sees both together."""
    from .tasks import execute_suite_run

    result = execute_suite_run.enqueue(run.pk)
    SuiteRun.objects.filter(pk=run.pk).update(task_id=str(result.id)[:64])


def _describe(exc: Exception) -> str:
    if isinstance(exc, ContractInvalid):
        return str(exc)
    return "".join(traceback.format_exception_only(exc)).strip()


def _new_totals() -> dict[str, int]:
    return {
        "scenarios": 0,
        "perturbations": 0,
        "compiles": 0,
        "failures": 0,
        "failing_scenarios": 0,
        "flipped_slots": 0,
        "variants_with_flips": 0,
        "refused": 0,
        "invalid": 0,
    }


def _add_totals(totals: dict[str, int], rows: Sequence[Mapping[str, Any]]) -> None:
    """Count one scenario's rows (its base first) into the run's totals."""
    base, variants = rows[0], rows[1:]
    totals["scenarios"] += 1
    totals["perturbations"] += len(variants)
    totals["compiles"] += len(rows)
    totals["failures"] += len(base["expectation_failures"])
    totals["failing_scenarios"] += bool(base["expectation_failures"])
    totals["refused"] += sum(r["result"] == "refused" for r in rows)
    totals["invalid"] += sum(r["result"] == "invalid" for r in rows)
    for row in variants:
        flipped = len(row["flips"]["slots"]) if row["flips"] else 0
        totals["flipped_slots"] += flipped
        totals["variants_with_flips"] += bool(flipped)


def _stored_totals(run: SuiteRun, totals: dict[str, int]) -> int:
    """Count the results a requeued run already stored into `totals`; the next position.

    Results and `done` are committed together, so the stored rows are exactly those of the
    first `done` scenarios."""
    rows = run.results.order_by("position").values(
        "position", "perturbation", "result", "expectation_failures", "flips"
    )
    scenario: list[dict[str, Any]] = []
    position = 0
    for row in rows.iterator():
        if not row["perturbation"] and scenario:
            _add_totals(totals, scenario)
            scenario = []
        scenario.append(row)
        position = row["position"] + 1
    if scenario:
        _add_totals(totals, scenario)
    return position


def _compile_run(
    run: SuiteRun, writer: _ResultWriter, claim: _RunClaim
) -> tuple[dict[str, Any], str]:
    """Compile the run's scenarios (after the `done` ones a requeued run already stored)
    into `writer`, committing with a heartbeat about every `SUITE_RUN_HEARTBEAT_SECONDS`
    (the last batch is left for the caller to commit with the outcome); the totals and the
    contract's sha256."""
    contract = compiled_contract(run.version)  # ContractInvalid fails the run
    contract_sha256 = document_sha256(contract.model_dump(mode="json"))
    scenarios = Scenario.objects.filter(decision_type=run.decision_type).select_related(
        "decision_type"
    )
    if run.scenario_id is not None:
        scenarios = scenarios.filter(pk=run.scenario_id)
    scenarios = list(scenarios.order_by("position", "name", "id"))
    totals = _new_totals()
    position = _stored_totals(run, totals) if run.done else 0
    remaining = scenarios[run.done :]
    corpora = _corpus_models({s.corpus_id for s in remaining})
    interval = _heartbeat_seconds()
    last_flush = time.perf_counter()
    for done, scenario in enumerate(remaining, start=run.done + 1):
        rows = _scenario_rows(run, scenario, contract, corpora[scenario.corpus_id], position)
        position += len(rows)
        writer.add(rows)
        # Each commit costs a disk sync: commit about once a heartbeat interval, not once
        # per scenario; the progress bar still moves.
        now = time.perf_counter()
        if done < len(scenarios) and now - last_flush >= interval:
            with transaction.atomic():
                # The run row first: a worker whose run was requeued writes nothing.
                claim.update(done=done, contract_sha256=contract_sha256)
                writer.flush()
            last_flush = now
        _add_totals(totals, rows)
    return totals, contract_sha256


class _ResultWriter:
    """Turns result rows into the parameters of one prepared INSERT and writes them in batches.

    A suite writes thousands of rows of which only the JSON columns need preparing; the ORM's
    `bulk_create` builds a statement with a placeholder per value and prepares every value,
    which cost more than the compiles themselves (see bench/sweep.py). Rows are turned into
    flat tuples of strings and numbers as soon as they are made, so the garbage collector has
    nothing to walk while they wait. The column list comes from the model, so the statement
    follows its migrations.
    """

    def __init__(self) -> None:
        fields = [f for f in ScenarioResult._meta.concrete_fields if not f.primary_key]
        quote = connection.ops.quote_name
        self.sql = "INSERT INTO {} ({}) VALUES ({})".format(
            quote(ScenarioResult._meta.db_table),
            ", ".join(quote(f.column) for f in fields),
            ", ".join(["%s"] * len(fields)),
        )
        self.columns = [(f.attname, f.get_internal_type() == "JSONField") for f in fields]
        self.adapt_json = connection.ops.adapt_json_value
        # Defaults prepared once: most rows leave several columns at their default.
        self.defaults = {
            name: self._prepare(ROW_DEFAULTS[name], is_json)
            for name, is_json in self.columns
            if name in ROW_DEFAULTS
        }
        self.pending: list[tuple[Any, ...]] = []

    def _prepare(self, value: Any, is_json: bool) -> Any:
        # None stays SQL NULL, as the ORM stores it.
        return self.adapt_json(value, None) if is_json and value is not None else value

    def add(self, rows: Sequence[dict[str, Any]]) -> None:
        prepare, defaults = self._prepare, self.defaults
        for row in rows:
            self.pending.append(
                tuple(
                    prepare(row[name], is_json) if name in row else defaults[name]
                    for name, is_json in self.columns
                )
            )

    def flush(self) -> None:
        with connection.cursor() as cursor:
            cursor.executemany(self.sql, self.pending)
        self.pending = []


def _corpus_models(ids: set[int]) -> dict[int, compiling.CorpusModels]:
    directories = dict(Corpus.objects.filter(pk__in=ids).values_list("pk", "directory"))
    rows: dict[int, list[dict[str, Any]]] = {pk: [] for pk in ids}
    candidates = CorpusCandidate.objects.filter(corpus_id__in=ids).order_by("position", "id")
    for corpus_id, data in candidates.values_list("corpus_id", "data"):
        rows[corpus_id].append(data)
    return {pk: compiling.CorpusModels.build(directories[pk], rows[pk]) for pk in ids}


# A result row as `_insert_results` takes it: the model's attnames, with these defaults.
ROW_DEFAULTS: dict[str, Any] = {
    "perturbation": "",
    "perturbation_args": None,
    "plan_id": "",
    "flips": None,
    "expectation_failures": [],
}


def _scenario_rows(
    run: SuiteRun,
    scenario: Scenario,
    contract: Any,
    corpus: compiling.CorpusModels,
    position: int,
) -> list[dict[str, Any]]:
    """The result rows of one scenario: its base first, then each perturbation."""
    common = {"run_id": run.pk, "scenario_id": scenario.pk, "scenario_name": scenario.name}
    try:
        document = compiling.scenario_input(scenario.request_document(), contract, corpus)
    except InvalidInput as exc:
        # A scenario the compiler cannot read fails its expectations; it has no perturbations.
        return [
            common
            | {
                "position": position,
                "input_sha256": "",
                "result": "invalid",
                "duration_ms": 0.0,
                "output_json": _json(exc.to_json()),
                "slot_states": {},
                "expectation_failures": [
                    {
                        "what": "input",
                        "key": _where(e["loc"]),
                        "expected": "valid",
                        "actual": e["msg"],
                    }
                    for e in exc.errors
                ],
            }
        ]
    swept = compiling.sweep_scenario(document, run.weak_classes, keep_models=False)
    base = swept.base
    base_sha256 = compiling.input_sha256(base.document)
    rows = [
        common
        | {
            "position": position,
            "input_sha256": base_sha256,
            "result": base.result,
            "plan_id": base.plan_id,
            "duration_ms": base.duration_ms,
            "output_json": base.output_json,
            "slot_states": base.slot_states,
            "expectation_failures": compiling.expectation_failures(
                base.output,
                base.slot_states,
                expected_slots=scenario.expected_slots,
                expected_admitted=scenario.expected_admitted,
                expected_rejected=scenario.expected_rejected,
            ),
        }
    ]
    for offset, variant in enumerate(swept.variants, start=1):
        rows.append(
            common
            | {
                "position": position + offset,
                "perturbation": variant.name,
                "perturbation_args": variant.perturbation,
                "input_sha256": compiling.variant_sha256(base_sha256, variant.perturbation),
                "result": variant.result,
                "plan_id": variant.plan_id,
                "duration_ms": variant.duration_ms,
                "output_json": variant.output_json,
                "slot_states": variant.slot_states,
                "flips": variant.flips,
            }
        )
    return rows


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _where(loc: Sequence[Any]) -> str:
    return ".".join(str(part) for part in loc)
