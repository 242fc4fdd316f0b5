"""The one call through which the adapters compile: the bundle's contract, the caller's
request and directory, and the candidates made of the retrieved documents."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from compiler import CompileInput, CompileOutput, compile_input
from compiler_trust import VerifiedBundle, compile_input_from_bundle


def decide(
    bundle: VerifiedBundle,
    request: Mapping[str, Any],
    directory: Mapping[str, Any] | None,
    candidates: Sequence[Mapping[str, Any]],
) -> CompileOutput:
    """What `evidence-compiler compile --bundle` computes. Raises `InvalidInput` listing every
    problem, each located in the compile input (`candidates[2].tokens`)."""
    return compile_input(compile_document(bundle, request, directory, candidates))


def compile_document(
    bundle: VerifiedBundle,
    request: Mapping[str, Any],
    directory: Mapping[str, Any] | None,
    candidates: Sequence[Mapping[str, Any]],
) -> CompileInput:
    document: dict[str, Any] = {"request": request, "candidates": list(candidates)}
    if directory is not None:
        document["directory"] = directory
    return compile_input_from_bundle(bundle, document)


def check_request(
    bundle: VerifiedBundle, request: Mapping[str, Any], directory: Mapping[str, Any] | None
) -> None:
    """Raises `InvalidInput` for a request or directory the bundle's contract cannot take, so
    an adapter refuses it when it is built rather than on its first query."""
    compile_document(bundle, request, directory, [])


__all__ = ["check_request", "decide"]
