"""The one call through which the adapters compile: the runtime's `decide` with the bundle's
contract, the caller's request and directory, and the candidates made of the retrieved
documents."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from compiler import CompileOutput
from compiler_tools import decide as runtime_decide
from compiler_tools import decision_input
from compiler_trust import VerifiedBundle


def decide(
    bundle: VerifiedBundle,
    request: Mapping[str, Any],
    directory: Mapping[str, Any] | None,
    candidates: Sequence[Mapping[str, Any]],
) -> CompileOutput:
    """What `evidence-compiler compile --bundle` computes. Raises `InvalidInput` listing every
    problem, each located in the compile input (`candidates[2].tokens`)."""
    return runtime_decide(bundle, request, candidates, directory=directory).output


def check_request(
    bundle: VerifiedBundle, request: Mapping[str, Any], directory: Mapping[str, Any] | None
) -> None:
    """Raises `InvalidInput` for a request or directory the bundle's contract cannot take, so
    an adapter refuses it when it is built rather than on its first query."""
    decision_input(bundle, request, [], directory=directory)


__all__ = ["check_request", "decide"]
