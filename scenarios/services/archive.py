"""Archiving instead of deleting: a scenario, corpus or candidate made by mistake is archived
(kept, with who and when, for the audit and for the runs that used it; hidden from lists,
suite runs, impact reports, exports and strength runs: `ArchivableQuerySet.live()`) and can be
restored. And cloning a scenario. Owners only (`change_decisiontype`), each change audited."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from contracts.models import DecisionType
from contracts.services import Actor, audit_record
from scenarios.audit import Action
from scenarios.models import Archivable, Corpus, CorpusCandidate, Scenario

from .base import _require_edit
from .scenarios import SCENARIO_FIELDS, _scenario_state

# Messages tests assert on.
CORPUS_IN_USE = (
    "Corpus '{corpus}' is used by scenarios that are not archived: {scenarios}. Archive them "
    "or move them to another corpus first."
)
CORPUS_ARCHIVED = "Corpus '{corpus}' is archived: restore it first."
ALREADY_ARCHIVED = "'{name}' is already archived."
NOT_ARCHIVED = "'{name}' is not archived."
COPY_SUFFIX = " (copy)"


def _change_archived(
    actor: Actor,
    row: Archivable,
    *,
    archive: bool,
    name: str,
    decision_type: DecisionType,
    actions: tuple[Action, Action],
    label: str,
) -> None:
    """Archive or restore one locked row for an owner of its type, and audit it: `actions` are
    the audit actions for archiving and restoring, `label` says what was changed."""
    _require_edit(actor, decision_type)
    if archive and row.is_archived:
        raise ValidationError(ALREADY_ARCHIVED.format(name=name))
    if not archive and not row.is_archived:
        raise ValidationError(NOT_ARCHIVED.format(name=name))
    row.archived_at = timezone.now() if archive else None
    row.archived_by = actor if archive else None
    row.save(update_fields=["archived_at", "archived_by"])
    audit_record(
        actor=actor,
        action=actions[0] if archive else actions[1],
        summary=f"{'Archived' if archive else 'Restored'} {label}",
        decision_type=decision_type,
    )


def _locked_scenario(scenario: Scenario) -> Scenario:
    return (
        Scenario.objects.select_for_update()
        .select_related("decision_type", "corpus")
        .get(pk=scenario.pk)
    )


def _change_scenario(actor: Actor, scenario: Scenario, *, archive: bool) -> Scenario:
    current = _locked_scenario(scenario)
    if not archive and current.corpus.is_archived:
        _require_edit(actor, current.decision_type)
        raise ValidationError(CORPUS_ARCHIVED.format(corpus=current.corpus.name))
    _change_archived(
        actor,
        current,
        archive=archive,
        name=current.name,
        decision_type=current.decision_type,
        actions=(Action.SCENARIO_ARCHIVED, Action.SCENARIO_RESTORED),
        label=f"scenario '{current.name}'",
    )
    return current


@transaction.atomic
def scenario_archive(*, actor: Actor, scenario: Scenario) -> Scenario:
    return _change_scenario(actor, scenario, archive=True)


@transaction.atomic
def scenario_restore(*, actor: Actor, scenario: Scenario) -> Scenario:
    return _change_scenario(actor, scenario, archive=False)


def _copy_name(scenario: Scenario) -> str:
    """'NAME (copy)', then 'NAME (copy 2)', … : the first not taken, archived ones included
    (names are unique per decision type)."""
    limit = Scenario._meta.get_field("name").max_length
    taken = set(
        Scenario.objects.filter(decision_type_id=scenario.decision_type_id).values_list(
            "name", flat=True
        )
    )
    number = 1
    while True:
        suffix = COPY_SUFFIX if number == 1 else f" (copy {number})"
        name = scenario.name[: limit - len(suffix)] + suffix
        if name not in taken:
            return name
        number += 1


@transaction.atomic
def scenario_clone(*, actor: Actor, scenario: Scenario) -> Scenario:
    """A new scenario with the same request, corpus and expectations, named 'NAME (copy)',
    placed last. The copy is live even when its source is archived (its corpus must be live)."""
    source = _locked_scenario(scenario)
    _require_edit(actor, source.decision_type)
    if source.corpus.is_archived:
        raise ValidationError(CORPUS_ARCHIVED.format(corpus=source.corpus.name))
    fields = {field: getattr(source, field) for field in SCENARIO_FIELDS}
    fields["name"] = _copy_name(source)
    position = (source.decision_type.scenarios.aggregate(p=Max("position"))["p"] or 0) + 1
    copy = Scenario.objects.create(
        decision_type=source.decision_type,
        corpus=source.corpus,
        created_by=actor,
        position=position,
        **fields,
    )
    audit_record(
        actor=actor,
        action=Action.SCENARIO_CREATED,
        summary=f"Cloned scenario '{source.name}' as '{copy.name}'",
        decision_type=source.decision_type,
        changes={"source": source.name, "after": _scenario_state(copy)},
    )
    return copy


def _locked_corpus(corpus: Corpus) -> Corpus:
    return Corpus.objects.select_for_update().select_related("decision_type").get(pk=corpus.pk)


@transaction.atomic
def corpus_archive(*, actor: Actor, corpus: Corpus) -> Corpus:
    """Refused while a live scenario uses the corpus, naming each."""
    current = _locked_corpus(corpus)
    _require_edit(actor, current.decision_type)
    users = list(
        current.scenarios.live().order_by("position", "name").values_list("name", flat=True)
    )
    if users:
        names = ", ".join(f"'{name}'" for name in users)
        raise ValidationError(CORPUS_IN_USE.format(corpus=current.name, scenarios=names))
    return _change_corpus(actor, current, archive=True)


@transaction.atomic
def corpus_restore(*, actor: Actor, corpus: Corpus) -> Corpus:
    return _change_corpus(actor, _locked_corpus(corpus), archive=False)


def _change_corpus(actor: Actor, current: Corpus, *, archive: bool) -> Corpus:
    _change_archived(
        actor,
        current,
        archive=archive,
        name=current.name,
        decision_type=current.decision_type,
        actions=(Action.CORPUS_ARCHIVED, Action.CORPUS_RESTORED),
        label=f"corpus '{current.name}'",
    )
    return current


def _change_candidate(
    actor: Actor, candidate: CorpusCandidate, *, archive: bool
) -> CorpusCandidate:
    current = (
        CorpusCandidate.objects.select_for_update()
        .select_related("corpus__decision_type")
        .get(pk=candidate.pk)
    )
    _change_archived(
        actor,
        current,
        archive=archive,
        name=current.candidate_id,
        decision_type=current.corpus.decision_type,
        actions=(Action.CANDIDATE_ARCHIVED, Action.CANDIDATE_RESTORED),
        label=f"candidate '{current.candidate_id}' of corpus '{current.corpus.name}'",
    )
    return current


@transaction.atomic
def candidate_archive(*, actor: Actor, candidate: CorpusCandidate) -> CorpusCandidate:
    return _change_candidate(actor, candidate, archive=True)


@transaction.atomic
def candidate_restore(*, actor: Actor, candidate: CorpusCandidate) -> CorpusCandidate:
    return _change_candidate(actor, candidate, archive=False)
