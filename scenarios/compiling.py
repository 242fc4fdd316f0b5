"""From stored rows to compiler inputs and back: the one place scenarios meet the compiler.

* `validate_corpus` checks a corpus document (`{"directory": …, "candidates": […]}`, or a whole
  compile input whose request and contract are ignored) with the compiler's own models and
  cross-reference checks, and reports every problem with its location.
* `scenario_input` builds the `CompileInput` of a scenario: its request, the version's contract
  (through `contracts.documents`, the only builder of that document) and its corpus.
* `sweep_scenario` compiles the base and the standard perturbation suite, timing each compile;
  each variant's `flips` also carries its `verdict` and `verdicts` (`compiler.relations`).
* `expectation_failures` compares a base compile with what the scenario expects.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from compiler import (
    COMPILER_VERSION,
    CompileInput,
    CompileOutput,
    InvalidInput,
    compile_input,
    load_input,
)
from compiler.jsonio import parse_json
from compiler.models import Candidate, Contract, Directory
from compiler.perturb import REFUSED, admitted_in, slot_states, sweep
from compiler.relations import VariantExpectation, slot_failures
from compiler.validation import cross_reference_problems

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
    return [CorpusProblem(loc=(*prefix, *e["loc"]), msg=e["msg"]) for e in exc.errors()]


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
            problems += _problems(exc, ("candidates", index))
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
    """A document read with `compiler.jsonio.parse_json` (depth, number, encoding and size
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


# --------------------------------------------------------------------------- compile inputs


@dataclass(frozen=True)
class CorpusModels:
    """A corpus validated once and shared by every scenario that uses it."""

    directory: Directory
    candidates: tuple[Candidate, ...]

    @classmethod
    def build(cls, directory: Mapping[str, Any], rows: Iterable[Mapping[str, Any]]) -> CorpusModels:
        return cls(
            directory=Directory.model_validate(directory or {}),
            candidates=tuple(Candidate.model_validate(row) for row in rows),
        )


def scenario_input(
    request: Mapping[str, Any], contract: Contract, corpus: CorpusModels
) -> CompileInput:
    """The compile input of one scenario; `InvalidInput` lists what is wrong with it."""
    return load_input(
        {
            "request": dict(request),
            "contract": contract,
            "directory": corpus.directory,
            "candidates": corpus.candidates,
        }
    )


def input_sha256(document: CompileInput) -> str:
    """sha256 of the input as the compiler serialises it: equal inputs, equal hashes."""
    return hashlib.sha256(document.model_dump_json().encode()).hexdigest()


def variant_sha256(base_sha256: str, perturbation: Mapping[str, Any]) -> str:
    """The hash of a variant's input, derived from what determines it.

    Operators are pure functions of the base input and their arguments, versioned with the
    compiler, so (compiler version, base hash, perturbation) names the variant's input as
    exactly as hashing its JSON would, without serialising it again (with 50 contaminants it
    is the largest document of a run).
    """
    spec = json.dumps(
        [COMPILER_VERSION, base_sha256, perturbation["operator"], perturbation["args"]],
        sort_keys=True,
    )
    return hashlib.sha256(spec.encode()).hexdigest()


@dataclass
class Compiled:
    """One compile of a sweep: what went in, what came out, how long it took.

    A sweep made with `keep_models=False` keeps a variant's output only as its JSON text
    (`output_json`) and not its input (`document` and `output` are None); the base keeps both.
    """

    perturbation: dict[str, Any] | None  # Perturbation.to_json(); None for the base
    document: CompileInput | None
    output: CompileOutput | None
    duration_ms: float
    slot_states: dict[str, str]
    flips: dict[str, Any] | None = None
    result: str = ""
    plan_id: str = ""
    output_json: str = ""

    @property
    def name(self) -> str:
        return self.perturbation["name"] if self.perturbation else ""


@dataclass
class Sweep:
    base: Compiled
    variants: list[Compiled] = field(default_factory=list)
    # The owners' expectations on single perturbations that do not hold, each with its
    # `perturbation` (compiler.relations.expectation_failures).
    expectation_failures: list[dict[str, Any]] = field(default_factory=list)

    @property
    def compiles(self) -> list[Compiled]:
        return [self.base, *self.variants]


def _serialise(output: CompileOutput) -> str:
    """`output.model_dump_json(by_alias=True)`, straight from the model's serializer."""
    return output.__pydantic_serializer__.to_json(output, by_alias=True).decode()


def sweep_scenario(
    document: CompileInput,
    weak_classes: Sequence[str] = (),
    *,
    keep_models: bool = True,
    expectations: Sequence[Any] = (),
) -> Sweep:
    """The base and the standard suite, through `compiler.perturb.sweep`, each compile timed.

    Every compile's `result` and `plan_id` are filled in. With `keep_models=False` each
    output is serialised at once (`output_json`, the compiler's own serialisation) and a
    variant's input and output models are let go as soon as the sweep has compared them with
    the base: a run that stores the JSON anyway would otherwise hold a scenario's worth of
    models alive, and the garbage collector walks them again and again (about a tenth of a
    run's time, see bench/sweep.py). With the default, `output_json` stays empty.
    `expectations` (`compiler.relations.VariantExpectation`s, or their dicts) are checked on
    their perturbations; the ones that do not hold are the sweep's `expectation_failures`.
    """
    seen: list[tuple[CompileInput | None, CompileOutput | None, float, str, str, str]] = []

    def timed(variant: CompileInput) -> CompileOutput:
        started = time.perf_counter()
        output = compile_input(variant)
        elapsed = (time.perf_counter() - started) * 1000
        keep = keep_models or not seen  # the base is always kept
        seen.append(
            (
                variant if keep else None,
                output if keep else None,
                elapsed,
                str(output.result),
                output.plan_id or "",
                "" if keep_models else _serialise(output),
            )
        )
        return output

    report = sweep(
        document,
        weak_classes=weak_classes,
        compile_fn=timed,
        expectations=[VariantExpectation.model_validate(e) for e in expectations],
    )
    (base_in, base_out, base_ms, base_result, base_plan, base_json), *variants = seen
    assert base_out is not None
    result = Sweep(
        base=Compiled(
            None, base_in, base_out, base_ms, slot_states(base_out, document),
            result=base_result, plan_id=base_plan, output_json=base_json,
        )
    )  # fmt: skip
    for row, (variant_in, variant_out, ms, outcome, plan_id, text) in zip(
        report["perturbations"], variants, strict=True
    ):
        perturbation = {k: row[k] for k in ("name", "operator", "args")}
        # The verdicts travel with the flips (and are stored with them on the result row) until
        # the workbench gives them a place of their own.
        judged = {
            **row["flips"], "label": row["label"], "verdict": row["verdict"],
            "verdicts": row["verdicts"],
        }  # fmt: skip
        result.variants.append(
            Compiled(
                perturbation, variant_in, variant_out, ms, row["slots"], judged,
                result=outcome, plan_id=plan_id, output_json=text,
            )
        )  # fmt: skip
    result.expectation_failures = report["expectation_failures"]
    return result


# --------------------------------------------------------------------------- expectations


def rejected_ids(output: CompileOutput) -> set[str]:
    return {r["id"] for r in output.rejected}


def expectation_failures(
    output: CompileOutput,
    states: Mapping[str, str],
    *,
    expected_slots: Mapping[str, str],
    expected_admitted: Sequence[str] | None = None,
    expected_rejected: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """What differs from the expectations: one entry per slot, plus admitted/rejected sets."""
    failures = slot_failures(states, expected_slots)  # the check of variant expectations too
    if expected_admitted is not None:
        actual_admitted = sorted(admitted_in(output))
        if sorted(expected_admitted) != actual_admitted:
            failures.append(
                {
                    "what": "admitted",
                    "key": "admitted",
                    "expected": sorted(expected_admitted),
                    "actual": actual_admitted,
                }
            )
    if expected_rejected is not None:
        actual_rejected = sorted(rejected_ids(output))
        if sorted(expected_rejected) != actual_rejected:
            failures.append(
                {
                    "what": "rejected",
                    "key": "rejected",
                    "expected": sorted(expected_rejected),
                    "actual": actual_rejected,
                }
            )
    return failures


def expectations_from(output: CompileOutput, states: Mapping[str, str]) -> dict[str, Any]:
    """The expectations that this compile would meet exactly."""
    return {
        "expected_slots": dict(states),
        "expected_admitted": sorted(admitted_in(output)),
        "expected_rejected": sorted(rejected_ids(output)),
    }


__all__ = [
    "REFUSED",
    "Compiled",
    "CorpusInvalid",
    "CorpusModels",
    "CorpusProblem",
    "Sweep",
    "ValidCorpus",
    "candidate_json",
    "corpus_document",
    "expectation_failures",
    "expectations_from",
    "slot_states",
    "input_sha256",
    "variant_sha256",
    "scenario_input",
    "sweep_scenario",
    "validate_corpus",
]
