"""A variant's whole output, compiled again from what its run stored.

A run stores every compile's result, plan id, slot states, flips and verdicts, but the whole
output (packet, rejections, trace) only of each scenario's base, with the base's input as
the compiler serialised it (`ScenarioResult.input_json`). A variant's input is a pure
function of that input and its perturbation (`compiler._perturb`), and the compiler is
deterministic, so its output is compiled again when someone opens it. That keeps a run's
rows about a third of the size and spares every run serialising outputs nobody may open.

A replay is shown only if it is the compile the run recorded: the stored input must still
hash to the base's `input_sha256`, and the variant compiled again must give the result, plan
id and slot states stored on its row (the plan id is a hash of the whole plan). Anything
else — a run stored before bases kept their input, a compiler that now plans differently — is
`NotReplayable`, with the reason the page shows beside the stored slot states.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from compiler import (
    COMPILER_VERSION,
    CompileOutput,
    InvalidInput,
    Perturbation,
    compile_input,
    load_input,
    slot_states,
)

from . import compiling

NO_INPUT = (
    "This run stored no input for the scenario's base (runs from before bases kept their "
    "input stored every variant's output instead), so this variant cannot be compiled again."
)
INPUT_CHANGED = (
    "The base's stored input no longer matches its hash, so this variant is not compiled "
    "again from it."
)
DIFFERENT = (
    "Compiled again by this workbench's compiler (version {version}), this variant gives a "
    "different {what} than the run recorded, so its packet and trace are not shown; the "
    "slot states below are the ones the run stored. Run the suite again to see this "
    "compiler's output."
)


class NotReplayable(Exception):
    """The variant's output cannot be shown as the run recorded it; the message says why."""


def replay_variant(
    *,
    base_input_json: str,
    base_sha256: str,
    perturbation: Mapping[str, Any] | None,
    result: str,
    plan_id: str,
    states: Mapping[str, str],
) -> CompileOutput:
    """The output of the variant `perturbation` of the base whose input the run stored,
    checked against what the run recorded of it (`result`, `plan_id`, `states`)."""
    if not base_input_json or not perturbation:
        raise NotReplayable(NO_INPUT)
    if compiling.text_sha256(base_input_json) != base_sha256:
        raise NotReplayable(INPUT_CHANGED)
    try:
        document = load_input(json.loads(base_input_json))
        variant = Perturbation.from_json(dict(perturbation)).apply(document)
    except (InvalidInput, ValueError) as exc:
        # A stored input this compiler no longer reads, or an operator it no longer has.
        raise NotReplayable(DIFFERENT.format(version=COMPILER_VERSION, what="input")) from exc
    output = compile_input(variant)
    for what, recorded, now in (
        ("result", result, str(output.result)),
        ("plan", plan_id, output.plan_id or ""),
        ("set of slot states", dict(states), slot_states(output, variant)),
    ):
        if recorded != now:
            raise NotReplayable(DIFFERENT.format(version=COMPILER_VERSION, what=what))
    return output
