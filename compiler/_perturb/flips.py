"""What changed between two compilations: slot states, the admitted set and `flips`."""

from __future__ import annotations

from typing import Any

from compiler._codes import Pass, Result
from compiler._input import CompileInput
from compiler._output import CompileOutput

REFUSED = "refused"


def slot_states(output: CompileOutput, document: CompileInput | None = None) -> dict[str, str]:
    """Each proposition's visible state; every slot reads `refused` when the compile was (a
    refused output has no slots: without the `document` naming them the result is empty)."""
    if output.result is not Result.COMPILED:
        if document is None:
            return {}
        return {p.key: REFUSED for p in document.contract.propositions}
    return {s.proposition: str(s.state) for s in output.slots}


def admitted_in(output: CompileOutput) -> set[str]:
    return {
        entry["id"]
        for entry in output.trace
        if entry["pass"] == Pass.ADMIT and entry["outcome"] == "admitted" and entry["id"]
    }


def flips(
    base: CompileOutput, variant: CompileOutput, document: CompileInput | None = None
) -> dict[str, Any]:
    """Slots whose state differs between two compilations, and how the admitted set moved.

    The outputs name their own slots; `document` (the base input) is needed only to name the
    slots when both compiles were refused. A refused side reads `refused` for every slot.
    """
    before, after = slot_states(base, document), slot_states(variant, document)
    keys = list(dict.fromkeys([*before, *after]))

    def state(states: dict[str, str], output: CompileOutput, key: str) -> str | None:
        return states.get(key, REFUSED if output.result is not Result.COMPILED else None)

    base_reasons = {s.proposition: str(s.reason) for s in base.slots}
    variant_reasons = {s.proposition: str(s.reason) for s in variant.slots}
    flipped = [
        {
            "proposition": key,
            "base": state(before, base, key),
            "variant": state(after, variant, key),
            "base_reason": base_reasons.get(key),
            "variant_reason": variant_reasons.get(key),
        }
        for key in keys
        if state(before, base, key) != state(after, variant, key)
    ]
    admitted_before, admitted_after = admitted_in(base), admitted_in(variant)
    return {
        "slots": flipped,
        "admitted_added": sorted(admitted_after - admitted_before),
        "admitted_removed": sorted(admitted_before - admitted_after),
        "packet_added": sorted(set(variant.packet_ids) - set(base.packet_ids)),
        "packet_removed": sorted(set(base.packet_ids) - set(variant.packet_ids)),
        "tokens": {"base": base.tokens_used, "variant": variant.tokens_used},
        "result": {"base": str(base.result), "variant": str(variant.result)},
        "refusal": variant.refusal.model_dump(by_alias=True) if variant.refusal else None,
    }
