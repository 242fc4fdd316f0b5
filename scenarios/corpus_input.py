"""Corpus documents: checking one (`validate_corpus`, every problem located, nothing
stored that a database or RFC 8785 cannot hold), reading untrusted JSON (`read_json`) and the
export shape (`corpus_document`). `scenarios.compiling` re-exports these names."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from compiler import (
    Candidate,
    Directory,
    InvalidInput,
    cross_reference_problems,
    parse_json,
)

from .input_messages import product_message

# Keys a corpus document may carry besides its own; a whole compile input imports as a corpus.
IGNORED_KEYS = frozenset({"request", "contract"})
CORPUS_KEYS = frozenset({"directory", "candidates"})

NOT_AN_OBJECT = "A corpus is a JSON object with a 'candidates' list (and optionally 'directory')."
NOT_A_LIST = "'candidates' must be a list of candidate objects."
UNKNOWN_KEY = "Unknown key '{key}'; a corpus has 'directory' and 'candidates'."
NOT_JSON = "This is not JSON: {error}"
UNSAFE_NUMBER = (
    "{value} is too large: bundles are hashed as RFC 8785 JSON, whose integers stop at "
    "±9007199254740991."
)
MAX_SAFE_INTEGER = 2**53 - 1
NUL_CHARACTER = "Contains a NUL character (\\u0000), which cannot be stored."
LONE_SURROGATE = "Contains half a surrogate pair (\\ud800–\\udfff), which is no character."


# --------------------------------------------------------------------------- corpus validation


@dataclass(frozen=True)
class CorpusProblem:
    """One problem in a corpus document, located the way the compiler locates it."""

    loc: tuple[str | int, ...]
    msg: str
    # The id of the candidate the problem is in, when it has one: people know their
    # candidates by id, not by position.
    candidate_id: str | None = None

    @property
    def index(self) -> int | None:
        """The candidate's position in the list, when the problem is in one."""
        if len(self.loc) >= 2 and self.loc[0] == "candidates" and isinstance(self.loc[1], int):
            return self.loc[1]
        return None

    @property
    def field(self) -> str:
        rest = self.loc[2:] if self.index is not None else self.loc
        whole = "(whole item)" if self.index is not None else "(document)"
        return ".".join(str(part) for part in rest) or whole

    @property
    def item(self) -> str:
        """`candidates[5] (id 'invoice/2026/0042')`, `candidates[5]`, or "" outside them."""
        if self.index is None:
            return ""
        named = f" (id {self.candidate_id!r})" if self.candidate_id is not None else ""
        return f"candidates[{self.index}]{named}"

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "candidate_id": self.candidate_id,
            "field": self.field,
            "message": self.msg,
        }

    def __str__(self) -> str:
        return f"{self.item} {self.field}: {self.msg}".strip()


class CorpusInvalid(ValueError):
    def __init__(self, problems: list[CorpusProblem]) -> None:
        super().__init__("; ".join(str(p) for p in problems))
        self.problems = problems


@dataclass(frozen=True)
class ValidCorpus:
    directory: dict[str, Any]
    candidates: list[dict[str, Any]]  # each as stored: compiler JSON without defaults


def candidate_json(candidate: Candidate) -> dict[str, Any]:
    return candidate.model_dump(mode="json", exclude_defaults=True)


def _problems(exc: ValidationError, prefix: tuple[str | int, ...]) -> list[CorpusProblem]:
    """pydantic's errors located under `prefix`, said in the workbench's words."""
    return [CorpusProblem(loc=(*prefix, *e["loc"]), msg=product_message(e)) for e in exc.errors()]


def unstorable_values(value: Any, loc: tuple[str | int, ...] = ()) -> list[CorpusProblem]:
    """What the compiler accepts but the workbench cannot keep: integers a bundle could not
    hash (RFC 8785 stops at 2**53 - 1) and NUL characters (PostgreSQL's JSON refuses them).
    Caught at input; otherwise the write, the impact report or publishing fails later."""
    if isinstance(value, Mapping):
        problems = []
        for key, item in value.items():
            problems += unstorable_values(key, (*loc, key))
            problems += unstorable_values(item, (*loc, key))
        return problems
    if isinstance(value, list | tuple):
        return [p for i, item in enumerate(value) for p in unstorable_values(item, (*loc, i))]
    if isinstance(value, str) and "\x00" in value:
        return [CorpusProblem(loc=loc, msg=NUL_CHARACTER)]
    if isinstance(value, str) and not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return [CorpusProblem(loc=loc, msg=LONE_SURROGATE)]
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_SAFE_INTEGER:
        return [CorpusProblem(loc=loc, msg=UNSAFE_NUMBER.format(value=value))]
    return []


def validate_corpus(document: Any) -> ValidCorpus:
    """Every problem of the document at once, or the normalised corpus."""
    if not isinstance(document, Mapping) or "candidates" not in document:
        raise CorpusInvalid([CorpusProblem(loc=(), msg=NOT_AN_OBJECT)])
    problems = [
        CorpusProblem(loc=(key,), msg=UNKNOWN_KEY.format(key=key))
        for key in document
        if key not in CORPUS_KEYS | IGNORED_KEYS
    ]
    items = document["candidates"]
    if not isinstance(items, list):
        raise CorpusInvalid([*problems, CorpusProblem(loc=("candidates",), msg=NOT_A_LIST)])
    directory: dict[str, Any] = {}
    try:
        directory = Directory.model_validate(document.get("directory") or {}).model_dump(
            mode="json"
        )
    except ValidationError as exc:
        problems += _problems(exc, ("directory",))
    else:
        problems += unstorable_values(directory, ("directory",))
    candidates = []
    for index, item in enumerate(items):
        try:
            candidates.append(candidate_json(Candidate.model_validate(item)))
        except ValidationError as exc:
            found = _problems(exc, ("candidates", index))
            # What pydantic accepted in an invalid candidate may still be unstorable (an
            # integer past 2**53): listed now, not after the other problems are fixed.
            located = {p.loc for p in found}
            found += [
                p
                for p in unstorable_values(item, ("candidates", index))
                if p.loc not in located and isinstance(item, Mapping)
            ]
            problems += found
        else:
            problems += unstorable_values(candidates[-1], ("candidates", index))
    problems += [
        CorpusProblem(loc=loc, msg=msg)
        for loc, msg in cross_reference_problems({"candidates": items})
    ]
    if problems:
        problems.sort(key=lambda p: tuple((0, x) if isinstance(x, int) else (1, x) for x in p.loc))
        raise CorpusInvalid([_with_candidate_id(p, items) for p in problems])
    return ValidCorpus(directory=directory, candidates=candidates)


def _with_candidate_id(problem: CorpusProblem, items: Sequence[Any]) -> CorpusProblem:
    index = problem.index
    if index is None or index >= len(items) or not isinstance(items[index], Mapping):
        return problem
    candidate_id = items[index].get("id")
    if not isinstance(candidate_id, str):
        return problem
    return CorpusProblem(loc=problem.loc, msg=problem.msg, candidate_id=candidate_id)


def read_json(data: bytes | str, *, max_bytes: int | None = None) -> Any:
    """A document read with `compiler.parse_json` (depth, number, encoding and size
    limits); what is wrong is raised as `CorpusInvalid`, located like the corpus's problems."""
    try:
        return parse_json(data, max_bytes=max_bytes)
    except InvalidInput as exc:
        raise CorpusInvalid(
            [CorpusProblem(loc=tuple(e["loc"]), msg=e["msg"]) for e in exc.errors]
        ) from None


def corpus_document(directory: Mapping[str, Any], candidates: Iterable[Mapping[str, Any]]) -> dict:
    """The export shape: the same format the import reads."""
    return {"directory": dict(directory), "candidates": [dict(c) for c in candidates]}
