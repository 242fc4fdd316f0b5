"""Archiving instead of deleting: a scenario, corpus or candidate made by mistake is archived
(kept, with who and when, for the audit and for the runs that used it; hidden from lists,
suite runs, impact reports, exports and strength runs: `ArchivableQuerySet.live()`) and can be
restored. And cloning a scenario. Owners only (`change_decisiontype`), each change audited."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from contracts.services import Actor, audit_record
from scenarios.audit import Action
from scenarios.fields import max_length
from scenarios.models import Archivable, Corpus, CorpusCandidate, Scenario

from .base import _require_edit

# Messages tests assert on.
CORPUS_IN_USE = (
    "Corpus '{corpus}' is used by scenarios that are not archived: {scenarios}. Archive them "
    "or move them to another corpus first."
)
CORPUS_ARCHIVED = "Corpus '{corpus}' is archived: restore it first."
ALREADY_ARCHIVED = "'{name}' is already archived."
NOT_ARCHIVED = "'{name}' is not archived."
COPY_SUFFIX = " (copy)"


def _set_archived(row: Archivable, actor: Actor | None, name: str, *, archive: bool) -> None:
    if archive and row.is_archived:
        raise ValidationError(ALREADY_ARCHIVED.format(name=name))
    if not archive and not row.is_archived:
        raise ValidationError(NOT_ARCHIVED.format(name=name))
    row.archived_at = timezone.now() if archive else None
    row.archived_by = actor if archive else None
    row.save(update_fields=["archived_at", "archived_by"])


def _locked_scenario(scenario: Scenario) -> Scenario:
    return (
        Scenario.objects.select_for_update()
        .select_related("decision_type", "corpus")
        .get(pk=scenario.pk)
    )


@transaction.atomic
def scenario_archive(*, actor: Actor, scenario: Scenario) -> Scenario:
    current = _locked_scenario(scenario)
    _require_edit(actor, current.decision_type)
    _set_archived(current, actor, current.name, archive=True)
    audit_record(
        actor=actor,
        action=Action.SCENARIO_ARCHIVED,
        summary=f"Archived scenario '{current.name}'",
        decision_type=current.decision_type,
    )
    return current


@transaction.atomic
def scenario_restore(*, actor: Actor, scenario: Scenario) -> Scenario:
    current = _locked_scenario(scenario)
    _require_edit(actor, current.decision_type)
    if current.corpus.is_archived:
        raise ValidationError(CORPUS_ARCHIVED.format(corpus=current.corpus.name))
    _set_archived(current, actor, current.name, archive=False)
    audit_record(
        actor=actor,
        action=Action.SCENARIO_RESTORED,
        summary=f"Restored scenario '{current.name}'",
        decision_type=current.decision_type,
    )
    return current


def _copy_name(scenario: Scenario) -> str:
    """'NAME (copy)', then 'NAME (copy 2)', … : the first not taken, archived ones included
    (names are unique per decision type)."""
    limit = max_length(Scenario, "name")
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
    from .scenarios import SCENARIO_FIELDS, _scenario_state

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
    _set_archived(current, actor, current.name, archive=True)
    audit_record(
        actor=actor,
        action=Action.CORPUS_ARCHIVED,
        summary=f"Archived corpus '{current.name}'",
        decision_type=current.decision_type,
    )
    return current


@transaction.atomic
def corpus_restore(*, actor: Actor, corpus: Corpus) -> Corpus:
    current = _locked_corpus(corpus)
    _require_edit(actor, current.decision_type)
    _set_archived(current, actor, current.name, archive=False)
    audit_record(
        actor=actor,
        action=Action.CORPUS_RESTORED,
        summary=f"Restored corpus '{current.name}'",
        decision_type=current.decision_type,
    )
    return current


def _locked_candidate(candidate: CorpusCandidate) -> CorpusCandidate:
    return (
        CorpusCandidate.objects.select_for_update()
        .select_related("corpus__decision_type")
        .get(pk=candidate.pk)
    )


@transaction.atomic
def candidate_archive(*, actor: Actor, candidate: CorpusCandidate) -> CorpusCandidate:
    current = _locked_candidate(candidate)
    _require_edit(actor, current.corpus.decision_type)
    _set_archived(current, actor, current.candidate_id, archive=True)
    audit_record(
        actor=actor,
        action=Action.CANDIDATE_ARCHIVED,
        summary=f"Archived candidate '{current.candidate_id}' of corpus '{current.corpus.name}'",
        decision_type=current.corpus.decision_type,
    )
    return current


@transaction.atomic
def candidate_restore(*, actor: Actor, candidate: CorpusCandidate) -> CorpusCandidate:
    current = _locked_candidate(candidate)
    _require_edit(actor, current.corpus.decision_type)
    _set_archived(current, actor, current.candidate_id, archive=False)
    audit_record(
        actor=actor,
        action=Action.CANDIDATE_RESTORED,
        summary=f"Restored candidate '{current.candidate_id}' of corpus '{current.corpus.name}'",
        decision_type=current.corpus.decision_type,
    )
    return current
