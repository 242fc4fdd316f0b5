"""From stored rows to compiler inputs and back: the one place scenarios meet the compiler.

* `validate_corpus` checks a corpus document (`{"directory": …, "candidates": […]}`, or a whole
  compile input whose request and contract are ignored) with the compiler's own models and
  cross-reference checks, and reports every problem with its location.
* `scenario_input` builds the `CompileInput` of a scenario: its request, the version's contract
  (through `contracts.documents`, the only builder of that document) and its corpus.
* `sweep_scenario` compiles the base and the standard perturbation suite, timing each compile;
  each variant's `flips` also carries its `verdict` and `verdicts` (`compiler.relations`).
* `expectation_failures` compares a base compile with what the scenario expects (its slots,
  id sets and pins, `scenarios.expectations`).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from operator import attrgetter
from typing import Any

import orjson

from compiler import (
    COMPILER_VERSION,
    CompileInput,
    CompileOutput,
    compile_input,
    load_input,
)
from compiler.models import Candidate, Contract, Directory
from compiler.perturb import REFUSED, admitted_in, slot_states, sweep
from compiler.relations import VariantExpectation, output_failures

from .corpus_input import (  # noqa: F401 - re-exported: compiling is where callers look
    CORPUS_KEYS,
    IGNORED_KEYS,
    LONE_SURROGATE,
    MAX_SAFE_INTEGER,
    NOT_A_LIST,
    NOT_AN_OBJECT,
    NOT_JSON,
    NUL_CHARACTER,
    UNKNOWN_KEY,
    UNSAFE_NUMBER,
    CorpusInvalid,
    CorpusProblem,
    ValidCorpus,
    candidate_json,
    corpus_document,
    read_json,
    unstorable_values,
    validate_corpus,
)

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

    @cached_property
    def _in_id_order(self) -> tuple[Candidate, ...]:
        # The order `load_input` puts a pool in (a stable sort by id).
        return tuple(sorted(self.candidates, key=attrgetter("id")))

    @cached_property
    def pool_json(self) -> tuple[str, str]:
        """The directory's and the candidates' JSON, as the compiler serialises them inside an
        input (`input_json`): made once for every scenario of the corpus."""
        candidates = ",".join(c.model_dump_json() for c in self._in_id_order)
        return self.directory.model_dump_json(), f"[{candidates}]"

    def is_pool_of(self, document: CompileInput) -> bool:
        """Whether `document` holds this corpus's directory and candidates themselves (what
        `scenario_input` builds), so their JSON is this corpus's."""
        pool = document.candidates
        return (
            document.directory is self.directory
            and len(pool) == len(self.candidates)
            and all(a is b for a, b in zip(pool, self._in_id_order, strict=True))
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


def input_json(document: CompileInput, corpus: CorpusModels | None = None) -> str:
    """The input as the compiler serialises it: what a base row stores (`input_json`), and
    what its `input_sha256` is the hash of.

    Given the `corpus` the document was built from, the same text is put together from parts:
    the request's, the contract's (serialised once for the contract object, which a run's
    scenarios share) and the corpus's (once per corpus). A run's scenarios differ only in
    their requests, and serialising the whole input for each was a fifth of what a run does
    beside compiling (bench/sweep.py)."""
    if corpus is None or not corpus.is_pool_of(document):
        return document.model_dump_json()
    directory, candidates = corpus.pool_json
    return (
        f'{{"request":{document.request.model_dump_json()},'
        f'"contract":{_contract_json(document.contract)},'
        f'"directory":{directory},"candidates":{candidates}}}'
    )


# The last contract serialised (the object itself, kept alive) and its JSON: a run's
# scenarios share one contract object, which is frozen. The pair is read and replaced whole.
_last_contract: tuple[Contract, str] | None = None


def _contract_json(contract: Contract) -> str:
    global _last_contract
    last = _last_contract
    if last is None or last[0] is not contract:
        last = _last_contract = (contract, contract.model_dump_json())
    return last[1]


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def input_sha256(document: CompileInput) -> str:
    """sha256 of the input as the compiler serialises it: equal inputs, equal hashes."""
    return text_sha256(input_json(document))


def variant_sha256(base_sha256: str, perturbation: Mapping[str, Any]) -> str:
    """The hash of a variant's input, derived from what determines it.

    Operators are pure functions of the base input and their arguments, versioned with the
    compiler, so (compiler version, base hash, perturbation) names the variant's input as
    exactly as hashing its JSON would, without serialising it again (with 50 contaminants it
    is the largest document of a run). The four are hashed as a JSON array with sorted keys.
    """
    spec = [COMPILER_VERSION, base_sha256, perturbation["operator"], perturbation["args"]]
    return hashlib.sha256(orjson.dumps(spec, option=orjson.OPT_SORT_KEYS)).hexdigest()


@dataclass
class Compiled:
    """One compile of a sweep: what went in, what came out, how long it took.

    A sweep made with `keep_models=False` keeps of a variant only what a run stores of it
    (`document` and `output` are None, `output_json` empty: `scenarios.replay` compiles it
    again from the base's input when asked); the base keeps both, and its output as JSON.
    """

    perturbation: dict[str, Any] | None  # Perturbation.to_json(); None for the base
    document: CompileInput | None
    output: CompileOutput | None
    duration_ms: float
    slot_states: dict[str, str]
    flips: dict[str, Any] | None = None
    result: str = ""
    # The variant's verdicts (`relations.judge`, as JSON); empty on the base.
    verdicts: list[dict[str, Any]] = field(default_factory=list)
    plan_id: str = ""
    output_json: str = ""

    @property
    def name(self) -> str:
        return self.perturbation["name"] if self.perturbation else ""

    @property
    def kept_output(self) -> CompileOutput:
        """The output, which every compile of a sweep made with `keep_models` keeps."""
        if self.output is None:
            raise ValueError("This compile's output was let go (keep_models=False).")
        return self.output


@dataclass
class BaseCompile(Compiled):
    """A sweep's base, whose input and output every sweep keeps."""

    document: CompileInput
    output: CompileOutput


@dataclass
class Sweep:
    base: BaseCompile
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
    catalogue: Mapping[str, int] | None = None,
) -> Sweep:
    """The base and the standard suite, through `compiler.perturb.sweep`, each compile timed.

    Every compile's `result` and `plan_id` are filled in. With `keep_models=False` the
    base's output is serialised (`output_json`, the compiler's own serialisation) and a
    variant's input and output models are let go as soon as the sweep has compared them with
    the base: a run would otherwise hold a scenario's worth of models alive, and the garbage
    collector walks them again and again. A variant's output is not serialised at all: its
    slot states, flips and verdicts are what a run reads, and the compiler is deterministic,
    so `scenarios.replay` gives its whole output again from the base's input (serialising
    every variant cost a tenth of a run, see bench/sweep.py). With the default, `output_json`
    stays empty.
    `expectations` (`compiler.relations.VariantExpectation`s, or their dicts) are checked on
    their perturbations; the ones that do not hold are the sweep's `expectation_failures`.
    """
    seen: list[tuple[CompileInput | None, CompileOutput | None, float, str, str, str]] = []

    def timed(variant: CompileInput) -> CompileOutput:
        started = time.perf_counter()
        output = compile_input(variant)
        elapsed = (time.perf_counter() - started) * 1000
        is_base = not seen
        keep = keep_models or is_base  # the base is always kept
        seen.append(
            (
                variant if keep else None,
                output if keep else None,
                elapsed,
                str(output.result),
                output.plan_id or "",
                _serialise(output) if is_base and not keep_models else "",
            )
        )
        return output

    report = sweep(
        document,
        weak_classes=weak_classes,
        compile_fn=timed,
        expectations=[VariantExpectation.model_validate(e) for e in expectations],
        catalogue=catalogue,
    )
    (base_in, base_out, base_ms, base_result, base_plan, base_json), *variants = seen
    assert base_in is not None and base_out is not None  # the base is always kept
    # The sweep's report already holds the base's slot states (`slot_states(base, document)`).
    result = Sweep(
        base=BaseCompile(
            None, base_in, base_out, base_ms, report["base"]["slots"],
            result=base_result, plan_id=base_plan, output_json=base_json,
        )
    )  # fmt: skip
    for row, (variant_in, variant_out, ms, outcome, plan_id, text) in zip(
        report["perturbations"], variants, strict=True
    ):
        perturbation = {k: row[k] for k in ("name", "operator", "args")}
        # The flips carry the perturbation in plain words and its worst verdict; the verdicts
        # themselves are stored in a column of their own (`ScenarioResult.verdicts`).
        judged = {**row["flips"], "label": row["label"], "verdict": row["verdict"]}
        result.variants.append(
            Compiled(
                perturbation, variant_in, variant_out, ms, row["slots"], judged,
                result=outcome, plan_id=plan_id, output_json=text, verdicts=row["verdicts"],
            )
        )  # fmt: skip
    result.expectation_failures = report["expectation_failures"]
    return result


# --------------------------------------------------------------------------- expectations


def rejected_ids(output: CompileOutput) -> set[str]:
    return {r["id"] for r in output.rejected}


def expectation_failures(
    output: CompileOutput, document: CompileInput, expected: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """What a base compile does not give of the scenario's expectations (`expected`: the
    `expected:` document, `scenarios.expectations.expected_document`): one row per slot,
    then decision_ready, the blocking set, each pinned slot's `required` and resource ids,
    and the admitted/rejected sets (`compiler.relations.output_failures`, the check the
    contract-test files run too)."""
    return output_failures(output, document, expected)


def expectations_from(output: CompileOutput, states: Mapping[str, str]) -> dict[str, Any]:
    """The expectations that this compile would meet exactly, every pin included (the
    scenario's field names; `scenarios.expectations`)."""
    return {
        "expected_slots": dict(states),
        "expected_admitted": sorted(admitted_in(output)),
        "expected_rejected": sorted(rejected_ids(output)),
        "expected_decision_ready": output.decision_ready,
        "expected_blocking": sorted(output.blocking),
        "expected_required": {s.proposition: s.required for s in output.slots},
        "expected_resource_ids": {s.proposition: list(s.resource_ids) for s in output.slots},
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
