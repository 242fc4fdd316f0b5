"""One candidate of a corpus, added or replaced through its form (locked optimistically)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from pydantic import ValidationError as PydanticValidationError

from compiler import Candidate, cross_reference_problems
from contracts.services import Actor, audit_record
from scenarios import compiling, selectors
from scenarios.audit import Action
from scenarios.models import Corpus, CorpusCandidate

from .base import _check_lock, _located, _require_edit
from .corpora import CANDIDATE_ID_LIMIT, ID_TOO_LONG
from .warnings import candidate_warnings

DUPLICATE_CANDIDATE = "This corpus already has a candidate '{id}'."
CANDIDATE_IN_USE = "'{id}' is named by other candidates ({users}); change them first."
STALE_CANDIDATE = (
    "Someone else saved this candidate since you opened it; nothing was saved — "
    "reload to see their version."
)

# The candidate's consistency rules (`compiler.Candidate._consistent`) raise without a
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
    candidate = _parsed(data)
    rows = {row.candidate_id: row for row in corpus.candidates.all()}
    current = rows.get(original_id) if original_id is not None else None
    if original_id is not None and current is None:
        raise ValidationError({"id": f"'{original_id}' is no longer in this corpus."})
    if current is not None:
        _check_lock(current, expected_lock_version, STALE_CANDIDATE)
    _check_references(candidate, rows, current=current, original_id=original_id)
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


def _parsed(data: Mapping[str, Any]) -> Candidate:
    """The candidate as the compiler reads it, storable as it is; else a `ValidationError`
    on the fields at fault."""
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
    return candidate


def _check_references(
    candidate: Candidate,
    rows: Mapping[str, CorpusCandidate],
    *,
    current: CorpusCandidate | None,
    original_id: str | None,
) -> None:
    """Refuse a duplicate id, what the compiler refuses across a pool (a supersession loop, a
    required group mixing requirement classes), and renaming a candidate others name.

    A `depends_on` or `superseded_by` naming an id outside the corpus is accepted, as the
    compiler accepts it (docs/design.md, "Pools as retrievers return them")."""
    if candidate.id in rows and rows[candidate.id] is not current:
        raise ValidationError({"id": DUPLICATE_CANDIDATE.format(id=candidate.id)})
    pool = [row.data for row in rows.values() if row is not current]
    pool.append(compiling.candidate_json(candidate))
    mine = [p for p in cross_reference_problems({"candidates": pool}) if p[0][1] == len(pool) - 1]
    if mine:
        by_field: dict[str, list[str]] = {}
        for loc, msg in mine:
            by_field.setdefault(str(loc[2]), []).append(_located(loc[3:], msg))
        raise ValidationError(by_field)
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
