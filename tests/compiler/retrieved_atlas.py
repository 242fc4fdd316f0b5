"""The Atlas candidates as a retrieval library holds them, for the adapter tests: each one's
text, its id and the rest of its fields as metadata, in the order a similarity search returns
them (highest relevance first), and the verified Atlas bundle they are compiled against."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from atlas_bundle import ATLAS, atlas_bundle, atlas_request, key_set

from compiler import CompileOutput, compile_input
from compiler_trust import (
    VerifiedBundle,
    compile_input_from_bundle,
    load_public_keys,
    verify_bundle,
)

REQUEST = ATLAS["request"]
DIRECTORY = ATLAS["directory"]
# The highest scorer: an investigation note only the financial-crime role may read.
FORBIDDEN = "investigation-X9"
PACKET = ("facility-F102", "workflow-E88", "policy-P3")


def retrieved() -> list[tuple[str, str, dict[str, Any]]]:
    """(id, text, metadata) of every Atlas candidate, most relevant first."""
    candidates = sorted(ATLAS["candidates"], key=lambda c: -c["relevance"])
    return [
        (c["id"], c["content"], {k: copy.deepcopy(v) for k, v in c.items()
                                 if k not in ("id", "content")})
        for c in candidates
    ]  # fmt: skip


def verified_bundle(directory: Path) -> VerifiedBundle:
    return verify_bundle(atlas_bundle(), load_public_keys(key_set(directory)))


def engine_output(bundle: VerifiedBundle) -> CompileOutput:
    """What the engine itself gives for the same request and candidates."""
    return compile_input(compile_input_from_bundle(bundle, atlas_request()))
