"""Corpora: the one loader of corpus files and pasted JSON, and the import that creates or
replaces a corpus from such a document."""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from contracts.models import DecisionType
from contracts.services import Actor, audit_record
from scenarios import compiling, selectors
from scenarios.audit import Action
from scenarios.fields import max_length
from scenarios.models import Corpus, CorpusCandidate

from .base import _require_edit
from .warnings import candidate_warnings

DUPLICATE_CORPUS = "This decision type already has a corpus named '{name}'."
ID_TOO_LONG = "An id is at most {limit} characters; this one has {length}."
CONTROL_CHARACTER = "A name cannot contain control characters such as a line break or a tab."

CANDIDATE_ID_LIMIT = max_length(CorpusCandidate, "candidate_id")


def corpus_read(data: bytes | str, *, max_bytes: int | None = None) -> Any:
    """The document of a corpus file or pasted text, read as `python -m compiler` reads its
    input (`compiling.read_json`: depth, number, encoding and, given `max_bytes`, size
    limits). What cannot be read is raised as `compiling.CorpusInvalid`, located like a
    corpus's problems. The import form and `manage.py import_fixtures` both read with this;
    `corpus_import` then validates the document."""
    return compiling.read_json(data, max_bytes=max_bytes)


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
    valid, warnings = _validated(document, decision_type=decision_type, strict=strict)
    corpus = Corpus.objects.select_for_update().filter(decision_type=decision_type, name=name)
    existing = corpus.first()
    if existing is not None and not replace:
        raise ValidationError({"name": DUPLICATE_CORPUS.format(name=name)})
    if existing is None:
        corpus_row = Corpus(
            decision_type=decision_type, name=name, description=description, created_by=actor
        )
        corpus_row.full_clean(exclude=["created_by", "decision_type"], validate_unique=False)
        old_locks: dict[str, int] = {}
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
    _store_candidates(corpus_row, valid.candidates, old_locks)
    audit_record(
        actor=actor,
        action=Action.CORPUS_IMPORTED,
        summary=f"Imported {len(valid.candidates)} candidates into corpus '{name}'",
        decision_type=decision_type,
        changes={"corpus": name, "candidates": len(valid.candidates), "replaced": bool(existing)},
    )
    corpus_row.warnings = warnings
    return corpus_row


def _store_candidates(
    corpus: Corpus, candidates: list[dict[str, Any]], old_locks: Mapping[str, int]
) -> None:
    """The corpus's candidates in import order; an id it held before keeps counting its
    lock version on."""
    CorpusCandidate.objects.bulk_create(
        CorpusCandidate(
            corpus=corpus,
            position=i,
            candidate_id=data["id"],
            data=data,
            lock_version=old_locks[data["id"]] + 1 if data["id"] in old_locks else 0,
        )
        for i, data in enumerate(candidates)
    )


def _validated(
    document: Any, *, decision_type: DecisionType, strict: bool
) -> tuple[compiling.ValidCorpus, list[compiling.CorpusProblem]]:
    """The valid corpus and its warnings; every problem at once as `CorpusInvalid`."""
    known = selectors.known_values(decision_type=decision_type)
    try:
        valid = compiling.validate_corpus(document)
    except compiling.CorpusInvalid as exc:
        problems = exc.problems + _long_ids(document)
        if strict:  # a misspelt class is one more problem: listed with the rest, not after
            problems += _raw_warnings(known, document)
        raise compiling.CorpusInvalid(_in_document_order(problems)) from None
    too_long = _long_ids(document)
    if too_long:
        raise compiling.CorpusInvalid(too_long)
    warnings = [
        warning
        for index, data in enumerate(valid.candidates)
        for warning in candidate_warnings(known, data, index=index)
    ]
    if strict and warnings:
        raise compiling.CorpusInvalid(warnings)
    return valid, warnings


def _raw_warnings(known: selectors.KnownValues, document: Any) -> list[compiling.CorpusProblem]:
    """`candidate_warnings` of each candidate of a document that did not validate."""
    items = document.get("candidates") if isinstance(document, Mapping) else None
    return [
        warning
        for index, item in enumerate(items if isinstance(items, list) else [])
        if isinstance(item, Mapping)
        for warning in candidate_warnings(known, item, index=index)
    ]


def _in_document_order(problems: list[compiling.CorpusProblem]) -> list[compiling.CorpusProblem]:
    """Each candidate's problems together, by field."""
    return sorted(
        problems, key=lambda p: tuple((0, x) if isinstance(x, int) else (1, str(x)) for x in p.loc)
    )


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
