"""Retrieved documents as compile candidates, and the packet back as documents.

A candidate field comes from the document's metadata key of the same name unless the mapping
names another key, or a function of the library's own object (a LangChain `Document`, a
LlamaIndex `NodeWithScore`) that returns the value. Two fields come from the document itself
unless mapped: `id` (the document's own id) and `content` (its text).

Every problem of a batch is reported at once, each naming the document (its position among the
retrieved ones and its id) and the candidate field: a required field with nothing to read, a
field function that fails, a value the engine's validation refuses.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from compiler import Candidate, CompileOutput, InvalidInput, PacketItem
from compiler_adapters._deciding import decide

if TYPE_CHECKING:
    from compiler_trust import VerifiedBundle

FieldSource = str | Callable[[Any], Any]
"""Where a candidate field comes from: a metadata key, or a function of the retrieved object."""

BUILT_IN = ("id", "content")
"""Read from the document itself (its id, its text) unless the mapping names a source."""

MAPPED_ONLY = frozenset({"source"})
"""Read only when mapped: document loaders put a file path in `source`, which is not the
candidate's `{kind, ref}`."""

REQUIRED = tuple(name for name, field in Candidate.model_fields.items() if field.is_required())
OPTIONAL = tuple(
    name
    for name, field in Candidate.model_fields.items()
    if not field.is_required() and name not in MAPPED_ONLY
)

NEEDS_LIBRARY = "{module} needs {library}: pip install 'evidence-compiler[{extra}]'"
NOT_A_FIELD = "'{field}' is not a candidate field (the fields are {known})"
NOTHING_TO_READ = "the candidate field '{field}' is required and the document has {where}"
FUNCTION_FAILED = "the candidate field '{field}': its function raised {error}"


@dataclass(frozen=True)
class Retrieved:
    """One retrieved document, whatever its library: the object itself (what field functions
    receive), its own id and text, and its metadata."""

    item: Any
    id: str | None
    text: str
    metadata: Mapping[str, Any]


@dataclass(frozen=True)
class DocumentProblem:
    position: int
    """1-based, among the documents the wrapped retriever returned."""
    document_id: str | None
    field: str | None
    message: str

    def __str__(self) -> str:
        name = f" ({self.document_id!r})" if self.document_id is not None else ""
        return f"document {self.position}{name}: {self.message}"


class UnusableDocuments(ValueError):
    """Retrieved documents that cannot be made into candidates; `problems` lists them all."""

    def __init__(self, problems: Sequence[DocumentProblem]):
        self.problems = tuple(problems)
        lines = "\n".join(f"  {p}" for p in self.problems)
        super().__init__(f"retrieved documents that cannot be candidates:\n{lines}")


@dataclass(frozen=True)
class Decision:
    """A compile of retrieved documents: the output, and the admitted documents' pairs of
    retrieved document and packet item, in the packet's order (none when refused)."""

    output: CompileOutput
    admitted: tuple[tuple[Retrieved, PacketItem], ...]


def check_fields(fields: Mapping[str, FieldSource]) -> None:
    """Refuses a mapping that names something other than a candidate field."""
    known = set(Candidate.model_fields)
    for field, source in fields.items():
        if field not in known:
            raise ValueError(NOT_A_FIELD.format(field=field, known=", ".join(sorted(known))))
        if not (isinstance(source, str) or callable(source)):
            raise ValueError(f"the source of '{field}' is neither a metadata key nor a function")


def decide_documents(
    bundle: VerifiedBundle,
    request: Mapping[str, Any],
    directory: Mapping[str, Any] | None,
    retrieved: Sequence[Retrieved],
    fields: Mapping[str, FieldSource],
) -> Decision:
    """Compiles the retrieved documents against the bundle's contract for `request`."""
    candidates, problems = _candidates(retrieved, fields)
    try:
        output = decide(bundle, request, directory, candidates)
    except InvalidInput as exc:
        engine = _located(exc, retrieved, fields, problems)
        if engine is None:
            raise
        problems.update(engine)
    if problems:
        raise UnusableDocuments([problems[key] for key in sorted(problems, key=_in_order)])
    by_id = {c["id"]: document for c, document in zip(candidates, retrieved, strict=True)}
    return Decision(output, tuple((by_id[item.id], item) for item in output.packet))


def packet_metadata(item: PacketItem, output: CompileOutput) -> dict[str, Any]:
    """What an admitted document's metadata gains: the plan it belongs to and what the packet
    says of it (JSON values, so a vector store or a prompt template can carry them)."""
    return {
        "plan_id": output.plan_id,
        "role": item.role.value,
        "supports": list(item.supports),
        "contradicts": list(item.contradicts),
        "form_rank": item.form_rank,
    }


Problems = dict[tuple[int, str | None, str], DocumentProblem]
"""Keyed by document position, field and the place inside the field (`forms[1].tokens`)."""

_FIELD_ORDER = {name: index for index, name in enumerate(Candidate.model_fields)}


def _in_order(key: tuple[int, str | None, str]) -> tuple[int, int, str]:
    position, field, place = key
    return position, -1 if field is None else _FIELD_ORDER.get(field, len(_FIELD_ORDER)), place


def _candidates(
    retrieved: Sequence[Retrieved], fields: Mapping[str, FieldSource]
) -> tuple[list[dict[str, Any]], Problems]:
    """The candidates, and the problems of reading them; a field with a problem is left out,
    so the engine's validation still reports every other problem of the batch."""
    problems: Problems = {}
    candidates = []
    for position, document in enumerate(retrieved, start=1):
        candidate: dict[str, Any] = {}
        for field in (*REQUIRED, *OPTIONAL, *(f for f in fields if f in MAPPED_ONLY)):
            try:
                value = _read(document, field, fields.get(field))
            except Exception as exc:  # a caller's field function: any failure is its problem
                message = FUNCTION_FAILED.format(field=field, error=f"{type(exc).__name__}: {exc}")
                problems[position, field, field] = DocumentProblem(
                    position, document.id, field, message
                )
                continue
            if value is not None:
                candidate[field] = value
            elif field in REQUIRED:
                message = NOTHING_TO_READ.format(
                    field=field, where=_where(field, fields.get(field))
                )
                problems[position, field, field] = DocumentProblem(
                    position, document.id, field, message
                )
        candidates.append(candidate)
    return candidates, problems


def _read(document: Retrieved, field: str, source: FieldSource | None) -> Any:
    if source is None:
        if field == "id":
            return document.id
        if field == "content":
            return document.text
        return document.metadata.get(field)
    if isinstance(source, str):
        return document.metadata.get(source)
    return source(document.item)


def _where(field: str, source: FieldSource | None) -> str:
    if source is None and field == "id":
        return "no id of its own (map 'id' to a metadata key)"
    if source is None or isinstance(source, str):
        return f"no metadata '{source or field}'"
    return "nothing from its function (it returned None)"


def _located(
    invalid: InvalidInput,
    retrieved: Sequence[Retrieved],
    fields: Mapping[str, FieldSource],
    known: Problems,
) -> Problems | None:
    """The engine's problems with the candidates, named by document and field, leaving out
    on fields the adapter has already named (its word explains the engine's `Field required`
    better); None when some problem is not a candidate's (the
    request's, say), so the engine's `InvalidInput` stands as it is."""
    problems: Problems = {}
    for error in invalid.errors:
        loc = list(error["loc"])
        if len(loc) < 2 or loc[0] != "candidates" or not isinstance(loc[1], int):
            return None
        position, document = loc[1] + 1, retrieved[loc[1]]
        field = loc[2] if len(loc) > 2 and isinstance(loc[2], str) else None
        if (position, field, field) in known:
            continue
        place = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc[2:])[1:]
        source = fields.get(field) if field else None
        if field is None:
            message = error["msg"]
        elif isinstance(source, str) or (source is None and field not in BUILT_IN):
            message = (
                f"the candidate field '{place}' (metadata '{source or field}'): {error['msg']}"
            )
        else:
            message = f"the candidate field '{place}': {error['msg']}"
        problems[position, field, place] = DocumentProblem(position, document.id, field, message)
    return problems


__all__ = [
    "Decision",
    "DocumentProblem",
    "FieldSource",
    "Retrieved",
    "UnusableDocuments",
    "check_fields",
    "decide_documents",
    "packet_metadata",
]
