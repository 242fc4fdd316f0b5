"""Suite strength: start a run (queued for the worker through `scenarios.tasks`; the computing
is `scenarios.strength_runner`'s), fail one whose worker stopped, and add the scenario a
surviving mutant's proposal asks for, in one step."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from pydantic import ValidationError as PydanticValidationError

from compiler.models import Request
from contracts.models import ContractVersion, DecisionType
from contracts.services import Actor, audit_record
from scenarios import compiling, tasks
from scenarios.audit import Action
from scenarios.expectations import DOCUMENT_KEYS, scenario_fields
from scenarios.models import Corpus, MutationRun, Scenario

from .base import NOT_ALLOWED, _located, can_edit
from .corpora import corpus_import
from .runs import NO_SCENARIOS, catalogue_tiers, weak_classes
from .scenarios import scenario_create

# Messages tests assert on.
STRENGTH_ALREADY_ACTIVE = (
    "Suite strength of version {number} is already being computed (run {pk}); wait for it."
)
STRENGTH_STOPPED = (
    "The worker computing this run stopped (no sign of it since {heartbeat}); start it again."
)
NOT_FINISHED = "That suite-strength run has not finished; wait for it, then add the scenario."
NO_SUCH_MUTANT = "Suite-strength run {pk} has no mutant '{key}'."
NOT_SURVIVING = "Mutant '{key}' is {status}, not surviving: no scenario is needed to catch it."
NO_PROPOSAL = (
    "Suite strength proposes no scenario for mutant '{key}'; write one as its advice says."
)
ALREADY_ADDED = "The scenario '{name}' already exists: run suite strength again to see it work."
OTHER_DECISION_TYPE = "The proposed request is for decision type '{actual}', not '{expected}'."
POOL_GONE = (
    "The proposal uses the corpus of scenario '{name}', which no longer exists: run suite "
    "strength again for a new proposal."
)
PROPOSAL_INVALID = "The proposed request is not valid: {problems}"
POOL_INVALID = "The proposed pool is not a valid corpus: {problems}"
# The corpus made for a proposal whose pool is no scenario's: named for the scenario.
PROPOSED_CORPUS_NAME = "Suite strength: {name}"
PROPOSED_DESCRIPTION = "Proposed by suite-strength run {pk} to catch this mistake: {mistake}"

# The keys of an expectation document a scenario has a field for.
_PINNABLE = frozenset(DOCUMENT_KEYS.values())

SCENARIO_NAME_LIMIT = Scenario._meta.get_field("name").max_length
CORPUS_NAME_LIMIT = Corpus._meta.get_field("name").max_length


@transaction.atomic
def mutation_run_start(*, actor: Actor, version: ContractVersion) -> MutationRun:
    """Queue a suite-strength run of `version` for the worker (owners only; one at a time per
    version). The task is enqueued in the same transaction as the run, so the worker sees
    both together (with the immediate backend, in tests, the run has finished when this
    returns)."""
    # Locked, so two owners starting at once queue one run, not two.
    version = (
        ContractVersion.objects.select_for_update()
        .select_related("decision_type")
        .get(pk=version.pk)
    )
    decision_type = version.decision_type
    if not can_edit(actor, decision_type):
        raise PermissionDenied(NOT_ALLOWED)
    active = version.mutation_runs.filter(status__in=MutationRun.ACTIVE).first()
    if active is not None:
        raise ValidationError(STRENGTH_ALREADY_ACTIVE.format(number=version.number, pk=active.pk))
    count = decision_type.scenarios.live().count()
    if count == 0:
        raise ValidationError(NO_SCENARIOS)
    run = MutationRun.objects.create(
        decision_type=decision_type,
        version=version,
        started_by=actor,
        catalogue=catalogue_tiers(),
        weak_classes=weak_classes(),
    )
    audit_record(
        actor=actor,
        action=Action.STRENGTH_STARTED,
        summary=f"Started suite strength of version {version.number} ({count} scenarios)",
        version=version,
        changes={"strength_run": run.pk, "scenarios": count},
    )
    result = tasks.execute_mutation_run.enqueue(run.pk)
    MutationRun.objects.filter(pk=run.pk).update(task_id=str(result.id)[:64])
    run.refresh_from_db()
    return run


def mutation_runs_fail_stale() -> list[MutationRun]:
    """Fail every suite-strength run whose worker stopped (`mutation_run_fail_if_stale`);
    every worker does this as it starts and then every STALE_WORK_CHECK_SECONDS
    (`db_worker`). The runs failed."""
    stale = _stale_mutation_runs().values_list("pk", flat=True)
    failed = (mutation_run_fail_if_stale(run_id=pk) for pk in stale)
    return [run for run in failed if run is not None]


def _stale_mutation_runs() -> QuerySet[MutationRun]:
    cutoff = timezone.now() - dt.timedelta(seconds=settings.SUITE_RUN_STALE_SECONDS)
    return MutationRun.objects.filter(status=MutationRun.Status.RUNNING, heartbeat_at__lt=cutoff)


def mutation_run_fail_if_stale(*, run_id: int) -> MutationRun | None:
    """If the run is running and its worker has not written it for
    `SUITE_RUN_STALE_SECONDS` (it was killed, say), fail it with `STRENGTH_STOPPED`: an owner
    starts it again (a run is minutes at most, so it is not resumed). The run if it was
    stale, else None. `mutation_runs_fail_stale` calls this for each stale run (the page
    never does: a GET writes nothing)."""
    with transaction.atomic():
        run = (
            _stale_mutation_runs()
            .select_for_update(of=("self",))
            .select_related("version")
            .filter(pk=run_id)
            .first()
        )
        if run is None:
            return None
        run.status, run.finished_at = MutationRun.Status.FAILED, timezone.now()
        run.error = STRENGTH_STOPPED.format(
            heartbeat=timezone.localtime(run.heartbeat_at).strftime("%H:%M:%S")
        )
        run.save(update_fields=["status", "finished_at", "error"])
        audit_record(
            actor=None,
            action=Action.STRENGTH_FAILED,
            summary=f"Suite strength {run.pk} failed: {run.error}",
            version=run.version,
            changes={"strength_run": run.pk, "done": run.done},
        )
    return run


@transaction.atomic
def proposal_add(*, actor: Actor, run: MutationRun, mutant_key: str) -> tuple[Scenario, list[str]]:
    """Create the scenario that the proposal of `run`'s surviving mutant `mutant_key` asks
    for: its request, over the corpus of the scenario whose pool it reuses (`pool_from`) or
    over a corpus made from its own pool, with its expectations pinned. Returns the scenario
    and the expectation keys a scenario has no field for (left unpinned). The scenario's
    creation is audited as any other's (`scenario_create`)."""
    # Locked, so two clicks at once add one scenario and refuse the other (ALREADY_ADDED).
    decision_type = DecisionType.objects.select_for_update().get(pk=run.decision_type_id)
    if not can_edit(actor, decision_type):
        raise PermissionDenied(NOT_ALLOWED)
    mutant, proposal = _proposal(run, mutant_key)
    name = str(proposal.get("name") or f"Catch {mutant_key}")[:SCENARIO_NAME_LIMIT]
    if decision_type.scenarios.filter(name=name).exists():
        raise ValidationError({"mutant": ALREADY_ADDED.format(name=name)})
    request = _request_fields(decision_type, proposal.get("request"))
    expected = proposal.get("expected") or {}
    fields = scenario_fields(expected)
    unpinned = sorted(
        key for key, value in expected.items() if key not in _PINNABLE and value is not None
    )
    description = PROPOSED_DESCRIPTION.format(pk=run.pk, mistake=mutant["description"])
    if proposal.get("description"):
        description += f"\n{proposal['description']}"
    scenario = scenario_create(
        actor=actor,
        decision_type=decision_type,
        corpus=_proposal_corpus(actor, decision_type, name, proposal, description),
        name=name,
        description=description,
        **request,
        **fields,
    )
    return scenario, unpinned


def _proposal(run: MutationRun, key: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The run's mutant `key` and its proposal, or the reason there is nothing to add."""
    if run.status != MutationRun.Status.FINISHED:
        raise ValidationError({"mutant": NOT_FINISHED})
    mutant = next((m for m in run.mutants if m["key"] == key), None)
    if mutant is None:
        raise ValidationError({"mutant": NO_SUCH_MUTANT.format(pk=run.pk, key=key)})
    if mutant["status"] != "surviving":
        raise ValidationError({"mutant": NOT_SURVIVING.format(key=key, status=mutant["status"])})
    if not mutant.get("proposal"):
        raise ValidationError({"mutant": NO_PROPOSAL.format(key=key)})
    return mutant, mutant["proposal"]


def _request_fields(decision_type: DecisionType, document: Any) -> dict[str, Any]:
    """The scenario's request fields from the proposal's compile-input request."""
    try:
        request = Request.model_validate(document)
    except PydanticValidationError as exc:
        problems = "; ".join(_located(e["loc"], e["msg"]) for e in exc.errors())
        raise ValidationError({"request": PROPOSAL_INVALID.format(problems=problems)}) from None
    if request.decision_type != decision_type.key:
        raise ValidationError(
            {
                "request": OTHER_DECISION_TYPE.format(
                    actual=request.decision_type, expected=decision_type.key
                )
            }
        )
    return {
        "principal": request.principal,
        "roles": list(request.roles),
        "purpose": request.purpose,
        "entity": request.entity,
        "decision_date": request.decision_date,
        "token_budget": request.token_budget,
        "delegation": (
            request.delegation.model_dump(mode="json") if request.delegation is not None else None
        ),
        "named": list(request.named),
    }


def _proposal_corpus(
    actor: Actor,
    decision_type: DecisionType,
    name: str,
    proposal: Mapping[str, Any],
    description: str,
) -> Corpus:
    """The corpus of the scenario named by `pool_from` while it still holds the proposal's
    pool; otherwise a new corpus of the proposal's pool, named for the scenario."""
    pool_from = proposal.get("pool_from")
    if pool_from:
        source = decision_type.scenarios.select_related("corpus").filter(name=pool_from).first()
        if source is not None and (
            not proposal.get("candidates") or _holds_pool(source.corpus, proposal)
        ):
            return source.corpus
        if not proposal.get("candidates"):
            raise ValidationError({"corpus": POOL_GONE.format(name=pool_from)})
    try:
        return corpus_import(
            actor=actor,
            decision_type=decision_type,
            name=_free_corpus_name(decision_type, PROPOSED_CORPUS_NAME.format(name=name)),
            document={
                "directory": proposal.get("directory") or {},
                "candidates": list(proposal.get("candidates") or []),
            },
            description=description,
        )
    except compiling.CorpusInvalid as exc:
        raise ValidationError({"corpus": POOL_INVALID.format(problems=exc)}) from None


def _holds_pool(corpus: Corpus, proposal: Mapping[str, Any]) -> bool:
    """Whether the corpus holds the proposal's directory and candidates, as the compiler
    reads them (the corpus may have been edited since the run)."""
    rows = corpus.candidates.live().order_by("position", "id").values_list("data", flat=True)
    try:
        stored = compiling.CorpusModels.build(corpus.directory, rows)
        proposed = compiling.CorpusModels.build(
            proposal.get("directory") or {}, proposal.get("candidates") or []
        )
    except PydanticValidationError:
        return False
    by_id = sorted(stored.candidates, key=lambda c: c.id)
    return stored.directory == proposed.directory and by_id == sorted(
        proposed.candidates, key=lambda c: c.id
    )


def _free_corpus_name(decision_type: DecisionType, wanted: str) -> str:
    """`wanted` (cut to fit), or with " (2)", " (3)"… if the type has a corpus so named."""
    taken = set(decision_type.corpora.values_list("name", flat=True))
    name, number = wanted[:CORPUS_NAME_LIMIT], 1
    while name in taken:
        number += 1
        suffix = f" ({number})"
        name = wanted[: CORPUS_NAME_LIMIT - len(suffix)] + suffix
    return name
