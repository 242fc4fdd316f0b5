"""`compile_input`: the six passes in order, and the one place refusals become output.

`run` is the compile itself and needs no pydantic: it takes a validated `CompileInput` or the
CLI's slotted twin of one (`_slotted`) and returns a `Compiled`. `compile_input` is the library's
interface around it, returning the `CompileOutput` model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from compiler._candidate_index import CandidateIndex
from compiler._codes import Outcome, Result
from compiler._compiled import Compiled, contract_ref, normalised_request
from compiler._errors import Refused
from compiler._passes.admit import admit
from compiler._passes.attest import attest
from compiler._passes.parse import parse
from compiler._passes.plan import plan
from compiler._passes.resolve import Resolution, resolve
from compiler._passes.typecheck import type_check
from compiler._trace import Trace

if TYPE_CHECKING:
    from compiler._input import CompileInput
    from compiler._output import CompileOutput
    from compiler._slotted import AnyInput


def compile_input(document: CompileInput) -> CompileOutput:
    """Compile one validated input. Pure: the same input, in any candidate order, gives the same
    output; nothing is read from a clock, the network, a file or a random source."""
    from compiler._compiled_to_output import to_output

    return to_output(run(document))


def run(document: AnyInput) -> Compiled:
    """`compile_input` before its output is made a model."""
    trace = Trace()
    # Every later choice breaks ties on id, so id order makes the output order-independent.
    # Validation already delivers that order; a document assembled by hand may not.
    candidates = document.candidates_in_id_order()
    by_id = CandidateIndex(candidates)
    resolution: Resolution | None = None
    try:
        parse(document, trace)
        resolution = resolve(document.request, document.directory, trace)
        type_check(document.request, document.contract, trace)
        admission = admit(candidates, by_id, document.request, resolution, document.contract, trace)
        planned = plan(document.request, document.contract, admission, by_id, trace)
        return attest(document, by_id, resolution, admission, planned, trace)
    except Refused as refused:
        trace.add(refused.pass_, Outcome.REFUSED, reason=refused.reason, detail=refused.detail)
        return Compiled(
            result=Result.REFUSED.value,
            contract=contract_ref(document),
            request=normalised_request(document, resolution) if resolution else None,
            token_budget=document.request.token_budget,
            trace=trace.snapshot(),
            refusal=(
                refused.pass_.value,
                refused.reason.value,
                None if refused.detail is None else str(refused.detail),
            ),
        )
