"""The compiles behind the scenario half of the report: a scenario swept with the standard
perturbations, each compile reduced to what the report compares, memoised per process."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from compiler import COMPILER_VERSION
from compiler.canonical import sha256_hex
from compiler.models import Contract
from compiler.perturb import admitted_in
from scenarios import compiling

BASE = "base"


@dataclass(frozen=True)
class Outcome:
    """One compile, reduced to what the report compares."""

    states: dict[str, str]
    admitted: frozenset[str]
    label: str = ""  # the perturbation in plain words ("" for the base)
    operator: str = ""  # the perturbation's operator ("" for the base)
    verdicts: tuple[dict[str, Any], ...] = ()  # its violations and findings (not expected)


# Compiles are pure functions of their input, so a sweep is memoised per process under a key
# naming everything it depends on: the compiler version, the contract's hash, the request, the
# corpus's content and the weak classes. A reviewer opening the report and then approving it
# (which recomputes it) pays for the compiles once. Bounded, first in first out.
_SWEEPS: OrderedDict[str, tuple[Any, Any, dict[str, Outcome], list[dict[str, Any]]]] = OrderedDict()
_SWEEPS_LOCK = threading.Lock()
SWEEP_CACHE_SIZE = 5000


def sweep_key(
    request: Mapping[str, Any],
    contract_sha: str,
    corpus_sha: str,
    weak: Any,
    catalogue: Mapping[str, int] | None = None,
    expectations: Sequence[Any] = (),
) -> str:
    return sha256_hex(
        [
            COMPILER_VERSION, contract_sha, dict(request), corpus_sha, list(weak),
            catalogue or {}, [dict(e) for e in expectations],
        ]
    )  # fmt: skip


def sweep(
    request: Mapping[str, Any],
    contract: Contract,
    corpus: Any,
    weak: Sequence[str],
    *,
    catalogue: Mapping[str, int] | None = None,
    key: str | None = None,
    expectations: Sequence[Any] = (),
):
    """(the compiler input, the base compile, each perturbation's `Outcome` by name, the
    failed per-perturbation `expectations`). Those are checked by `compiling.sweep_scenario`,
    the one evaluation the runner and the flip matrix use too."""
    if key is not None:
        with _SWEEPS_LOCK:
            cached = _SWEEPS.get(key)
        if cached is not None:
            return cached
    document = compiling.scenario_input(request, contract, corpus)
    swept = compiling.sweep_scenario(document, weak, catalogue=catalogue, expectations=expectations)
    outcomes = {
        (c.name or BASE): Outcome(
            c.slot_states,
            frozenset(admitted_in(c.output)),
            label=(c.flips or {}).get("label", ""),
            operator=(c.perturbation or {}).get("operator", ""),
            verdicts=tuple(v for v in c.verdicts if v["kind"] != "expected"),
        )
        for c in swept.compiles
    }
    result = (document, swept.base, outcomes, swept.expectation_failures)
    if key is not None:
        with _SWEEPS_LOCK:
            _SWEEPS[key] = result
            while len(_SWEEPS) > SWEEP_CACHE_SIZE:
                _SWEEPS.popitem(last=False)
    return result
