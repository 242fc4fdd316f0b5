"""The two ways a compile does not produce a packet.

`InvalidInput` is malformed input, raised before any decision (exit 2). A named refusal is a
legitimate answer to a well-formed request and travels as `Refused` until the pipeline turns
it into a refused `CompileOutput` with the trace so far (exit 1).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from compiler._codes import Pass, RefusalReason

if TYPE_CHECKING:  # a compile of valid input never imports pydantic
    from pydantic import ValidationError


class InvalidInput(ValueError):
    def __init__(self, errors: list[dict[str, Any]]):
        self.errors = errors
        lines = [f"{_where(e['loc'])}: {e['msg']}" for e in errors]
        super().__init__("invalid compile input:\n" + "\n".join(lines))

    @classmethod
    def from_validation_error(cls, exc: ValidationError) -> InvalidInput:
        return cls([{"loc": list(e["loc"]), "msg": e["msg"]} for e in exc.errors()])

    def to_json(self) -> dict[str, Any]:
        return {"result": "invalid", "errors": self.errors}


class Refused(Exception):
    def __init__(self, pass_: Pass, reason: RefusalReason, detail: str | None = None):
        self.pass_ = pass_
        self.reason = reason
        self.detail = detail
        super().__init__(f"{pass_}: {reason}" + (f" ({detail})" if detail else ""))


def _where(loc: list[Any] | tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(document)"
