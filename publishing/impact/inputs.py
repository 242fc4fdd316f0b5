"""The hash of everything a version's impact report is computed from (`inputs_sha256`): the
key its stored report is kept and found by. A page asks for it once per request
(`hashed_once`), however many parts of the page look at the report; and a page finds a
ready report first by `inputs_fingerprint`, a few aggregates over the same inputs, without
reading every scenario."""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
from collections.abc import Callable, Iterator
from typing import Any

from django.db.models import Count, JSONField, Max, Model, Sum, TextField
from django.db.models.functions import Cast

from compiler import COMPILER_VERSION
from contracts.documents import compiled_contract
from contracts.models import ContractVersion, SourceClass
from scenarios.models import Corpus, CorpusCandidate, Scenario
from scenarios.services import SCENARIO_FIELDS, catalogue_tiers, weak_classes

from .report import FORMAT, baseline_version

# Within `hashed_once`: each version's hash, by its id and lock (an edit moves the lock),
# and what was read by that hash (`remembered`).
_HASHED: contextvars.ContextVar[dict[Any, Any] | None] = contextvars.ContextVar(
    "impact_inputs_hashed", default=None
)


@contextlib.contextmanager
def hashed_once() -> Iterator[None]:
    """Hash each version's inputs at most once inside the block: for a page that only reads
    (the inputs cannot change under it), not for an action that writes."""
    token = _HASHED.set({})
    try:
        yield
    finally:
        _HASHED.reset(token)


def reading_page() -> bool:
    """Whether this is a page's read (inside `hashed_once`), not an action's."""
    return _HASHED.get() is not None


def remembered[T](key: Any, read: Callable[[], T]) -> T:
    """`read()`, once per `key` inside `hashed_once` (every time outside it)."""
    memo = _HASHED.get()
    if memo is None:
        return read()
    if key not in memo:
        memo[key] = read()
    return memo[key]


def inputs_sha256(version: ContractVersion) -> str:
    """The hash of everything `impact_report(version)` reads: both contracts (as compiled),
    the baseline's number, the scenarios and their expectations, the corpora, the weak
    classes and the catalogue's authority tiers, the owners' justifications of its violations
    and the compiler version.
    `ContractInvalid` if the version is not a contract.

    An internal key, never shown or signed, so plain sorted JSON is hashed (canonical RFC
    8785 hashing of 10,000 scenarios would cost more than the queries)."""
    return remembered((version.pk, version.lock_version), lambda: _inputs_sha256(version))


def _inputs_sha256(version: ContractVersion) -> str:
    draft = compiled_contract(version).model_dump(mode="json")
    baseline = baseline_version(version)
    published = compiled_contract(baseline).model_dump(mode="json") if baseline else None
    scenarios = Scenario.objects.live().filter(decision_type_id=version.decision_type_id)
    scenario_rows = scenarios.order_by("position", "name", "id").values_list(
        "id", "corpus_id", *(_as_stored(Scenario, name) for name in SCENARIO_FIELDS)
    )
    corpus_ids = scenarios.values("corpus_id")
    candidates = (
        CorpusCandidate.objects.live()
        .filter(corpus_id__in=corpus_ids)
        .order_by("corpus_id", "position", "id")
        .values_list("corpus_id", _as_stored(CorpusCandidate, "data"))
    )
    directories = Corpus.objects.filter(pk__in=corpus_ids).order_by("pk")
    justifications = version.justifications.order_by(
        "operator", "proposition", "cause"
    ).values_list("operator", "proposition", "cause", "proposition_sha256", "text", "author_id")
    digest = hashlib.sha256()
    for part in (
        [FORMAT, COMPILER_VERSION, version.pk, version.number, version.sha256, draft],
        [baseline.number if baseline else None, published],
        weak_classes(),
        catalogue_tiers(),
        list(directories.values_list("pk", "directory")),
        list(justifications),
    ):
        digest.update(_json(part))
    for rows in (scenario_rows, candidates):
        for row in rows.iterator(chunk_size=2000):
            digest.update(_json(row))
        digest.update(b"|")
    return digest.hexdigest()


def _as_stored(model: type[Model], name: str) -> str | Cast:
    """A JSON field as the database's text: hashing needs no decoded value, and decoding
    every scenario's JSON was most of a page's time at 2,000 scenarios."""
    if isinstance(model._meta.get_field(name), JSONField):
        return Cast(name, output_field=TextField())
    return name


def _json(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, default=str, separators=(",", ":")).encode()


def inputs_fingerprint(version: ContractVersion) -> str:
    """A hash of aggregates that change whenever an input of the version's report does: the
    version's content (its lock moves on every edit) and its baseline's; the live scenarios'
    count, ids and latest edit (`updated_at` moves on every save); the type's corpora's
    likewise; their live candidates' count, ids and edit counters (each edit moves one; a
    replaced corpus gives new ids); the catalogue's classes and the version's
    justifications, read whole (a handful of rows). A few queries whatever the suite's size,
    where `inputs_sha256` reads every scenario and candidate; what a page finds a ready
    report by (`stored.stored_report`), never what an action approves by."""
    return remembered(
        ("fingerprint", version.pk, version.lock_version), lambda: _fingerprint(version)
    )


def _fingerprint(version: ContractVersion) -> str:
    type_id = version.decision_type_id
    baseline = baseline_version(version)
    scenarios = Scenario.objects.live().filter(decision_type_id=type_id)
    corpora = Corpus.objects.filter(decision_type_id=type_id)
    candidates = CorpusCandidate.objects.live().filter(corpus__decision_type_id=type_id)
    justifications = version.justifications.order_by("pk").values_list(
        "pk", "operator", "proposition", "cause", "proposition_sha256", "text", "author_id"
    )
    parts = [
        [FORMAT, COMPILER_VERSION, version.pk, version.lock_version, version.sha256],
        [baseline.pk, baseline.lock_version, baseline.sha256] if baseline else None,
        scenarios.aggregate(n=Count("pk"), ids=Sum("pk"), edited=Max("updated_at")),
        corpora.aggregate(n=Count("pk"), ids=Sum("pk"), edited=Max("updated_at")),
        candidates.aggregate(n=Count("pk"), ids=Sum("pk"), edits=Sum("lock_version")),
        # The weak classes and the catalogue's tiers, read in one query.
        list(SourceClass.objects.order_by("key").values_list("key", "authority_tier", "weak")),
        list(justifications),
    ]
    return hashlib.sha256(_json(parts)).hexdigest()
