"""Scenarios: create, update (locked optimistically) and "take the current result as
expected"."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from pydantic import ValidationError as PydanticValidationError

from compiler import OPERATORS, Delegation, VariantExpectation
from contracts.models import ContractVersion, DecisionType
from contracts.services import Actor, audit_record
from scenarios import compiling, selectors
from scenarios.audit import Action
from scenarios.expectations import PIN_FIELDS, clean_pins, taken
from scenarios.models import SLOT_STATES, Corpus, Scenario

from .base import _check_lock, _located, _require_edit

DUPLICATE_SCENARIO = "This decision type already has a scenario named '{name}'."
WRONG_CORPUS = "That corpus belongs to another decision type."
UNKNOWN_STATE = (
    "'{state}' is not a slot state; use " + ", ".join(SLOT_STATES[:-1]) + f" or {SLOT_STATES[-1]}."
)
NOT_A_LIST_OF_EXPECTATIONS = (
    'Give the expectations on perturbations as a JSON list of {"operator", "args", '
    '"proposition", "state"} objects.'
)
UNKNOWN_OPERATOR = "'{operator}' is not an operator; the operators are {known}."
NO_ROLES = "Give at least one role the principal holds."
STALE_SCENARIO = (
    "Someone else saved this scenario since you opened it; nothing was saved — "
    "reload to see their version."
)


def _clean_scenario_fields(
    decision_type: DecisionType, corpus: Corpus, fields: dict[str, Any]
) -> dict[str, Any]:
    if corpus.decision_type_id != decision_type.pk:
        raise ValidationError({"corpus": WRONG_CORPUS})
    clean_pins(fields, _known_propositions(decision_type, fields))
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
    fields["variant_expectations"] = _clean_variant_expectations(fields.get("variant_expectations"))
    roles = list(fields.get("roles") or [])
    if not roles or not all(isinstance(role, str) and role.strip() for role in roles):
        # A request without roles admits nothing a role allows: a typing slip, not a test.
        raise ValidationError({"roles": NO_ROLES})
    fields["roles"] = list(dict.fromkeys(roles))
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


def _known_propositions(
    decision_type: DecisionType, fields: Mapping[str, Any]
) -> frozenset[str] | None:
    """What a pin may name: a proposition of any version (one the draft dropped must fail
    the run, not be refused), never one no version has (it could never hold). None when the
    type has no version yet, or no pin names a proposition (nothing to read then)."""
    if not any(fields.get(f) for f in ("expected_blocking", "expected_required",
                                       "expected_resource_ids")):  # fmt: skip
        return None
    known = selectors.known_values(decision_type=decision_type)
    return known.propositions if known.has_contract else None


def _clean_variant_expectations(value: Any) -> list[dict[str, Any]]:
    """Owners' expectations on single perturbations, each checked as the compiler reads it
    (`compiler.VariantExpectation`: a known operator with valid arguments)."""
    if not value:
        return []
    if not isinstance(value, list):
        raise ValidationError({"variant_expectations": NOT_A_LIST_OF_EXPECTATIONS})
    cleaned = []
    for index, item in enumerate(value, start=1):
        operator = item.get("operator") if isinstance(item, Mapping) else None
        if isinstance(operator, str) and operator not in OPERATORS:
            # Said first: the arguments an unknown operator lacks are no problem of their own.
            known = ", ".join(sorted(OPERATORS))
            raise ValidationError(
                {
                    "variant_expectations": f"Expectation {index}: "
                    + UNKNOWN_OPERATOR.format(operator=operator, known=known)
                }
            )
        try:
            expectation = VariantExpectation.model_validate(item)
        except (PydanticValidationError, ValueError, KeyError, TypeError) as exc:
            raise ValidationError(
                {"variant_expectations": f"Expectation {index}: {_expectation_error(exc)}"}
            ) from None
        cleaned.append(expectation.model_dump(mode="json"))
    return cleaned


def _expectation_error(exc: Exception) -> str:
    if isinstance(exc, PydanticValidationError):
        return "; ".join(_located(e["loc"], e["msg"]) for e in exc.errors())
    return str(exc)


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
    *PIN_FIELDS,
    "variant_expectations",
)
# What "take the current result as expected" may change.
TAKEN_FIELDS = ("expected_slots", "expected_admitted", "expected_rejected", *PIN_FIELDS)


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
    expected_decision_ready: bool | None = None,
    expected_blocking: Sequence[str] | None = None,
    expected_required: Mapping[str, bool] | None = None,
    expected_resource_ids: Mapping[str, Sequence[str]] | None = None,
    variant_expectations: Sequence[Mapping[str, Any]] = (),
    description: str = "",
) -> Scenario:
    """A new scenario. The expectations (`scenarios.expectations`): `expected_slots`, the
    exact `expected_admitted` / `expected_rejected` ids, and the pins on the output's
    meaning: `expected_decision_ready`, the exact `expected_blocking` propositions, each
    named slot's `expected_required` flag and its `expected_resource_ids` in order. None (or
    an empty mapping) is "not checked". `ValidationError` names the field and what is wrong,
    and nothing is saved."""
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
            "expected_decision_ready": expected_decision_ready,
            "expected_blocking": expected_blocking,
            "expected_required": expected_required,
            "expected_resource_ids": expected_resource_ids,
            "variant_expectations": list(variant_expectations),
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
    `selectors.expectation_preview`): every slot state, and each other check only where the
    scenario already makes it (`expectations.taken`: admitted/rejected ids, decision_ready,
    the blocking set, a slot's `required` or resource ids). A stale `expected_lock_version`
    (the scenario was saved since the page was shown) raises `EditConflict` and changes
    nothing."""
    current = (
        Scenario.objects.select_for_update().select_related("decision_type").get(pk=scenario.pk)
    )
    _require_edit(actor, current.decision_type)
    _check_lock(current, expected_lock_version, STALE_SCENARIO)
    before = {field: getattr(current, field) for field in TAKEN_FIELDS}
    after = taken(current, expectations)
    for field, value in after.items():
        setattr(current, field, value)
    current.lock_version += 1
    current.save(update_fields=[*TAKEN_FIELDS, "lock_version", "updated_at"])
    audit_record(
        actor=actor,
        action=Action.EXPECTATIONS_TAKEN,
        summary=f"Took the result against version {version.number} as expected for "
        f"'{current.name}'",
        decision_type=current.decision_type,
        version=version,
        changes={"before": before, "after": after},
    )
    return current
