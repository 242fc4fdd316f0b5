"""Small builders for compile-input documents, so each test states only what matters.

Every builder returns plain JSON-shaped dicts (what a caller of the compiler really sends);
`compile_doc` validates and compiles one. Defaults describe one admissible facility record for
maya (credit analyst) on ATLAS-IN-01 on 2026-08-30, under a one-proposition contract.

(The module has a distinctive name because tests/ is not a package: pytest puts this folder
on sys.path, so a generic name such as `factories` could collide with another suite's.)
"""

from __future__ import annotations

import copy
import json
from typing import Any

from compiler import CompileOutput, compile_input, load_input

DECISION_TYPE = "credit.review.continuation"
PURPOSE = "annual_credit_review"
ENTITY = "ATLAS-IN-01"
ROLE = "credit_analyst"
DECISION_DATE = "2026-08-30"


def candidate(cid: str, **overrides: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "id": cid,
        "entity": ENTITY,
        "allowed_roles": [ROLE],
        "allowed_purposes": [PURPOSE],
        "evidence_class": "facility_record",
        "supports": ["facility_limit"],
        "valid_from": "2025-01-01",
        "tokens": 100,
        "relevance": 0.5,
        "content": f"CONTENT-OF-{cid}",
    }
    doc.update(overrides)
    return doc


def context_item(cid: str, role: str = "instruction", **overrides: Any) -> dict[str, Any]:
    """A candidate that speaks to no proposition (an instruction, the task, a tool…)."""
    return candidate(cid, role=role, evidence_class=role, supports=[], **overrides)


def proposition(key: str, *classes: str, **overrides: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {"key": key, "accepted_classes": list(classes)}
    doc.update(overrides)
    return doc


FACILITY = proposition("facility_limit", "facility_record")


def contract(*propositions: dict[str, Any], **overrides: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "decision_type": DECISION_TYPE,
        "version": "1",
        "purposes": [PURPOSE],
        "propositions": list(propositions) or [copy.deepcopy(FACILITY)],
    }
    doc.update(overrides)
    return doc


def request(**overrides: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "decision_type": DECISION_TYPE,
        "principal": "maya",
        "roles": [ROLE],
        "purpose": PURPOSE,
        "entity": ENTITY,
        "decision_date": DECISION_DATE,
        "token_budget": 1000,
    }
    doc.update(overrides)
    return doc


def delegation(**overrides: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "service": "review-bot",
        "on_behalf_of": "maya",
        "scopes": [ROLE],
        "valid_from": "2026-01-01",
        "valid_to": "2026-12-31",
        "revoked": False,
    }
    doc.update(overrides)
    return doc


def document(
    *candidates: dict[str, Any],
    req: dict[str, Any] | None = None,
    con: dict[str, Any] | None = None,
    directory: dict[str, Any] | None = None,
    **request_overrides: Any,
) -> dict[str, Any]:
    """A whole input: `req`/`con` replace the default request/contract; keyword arguments
    override single request fields (token_budget=0, named=[...], ...)."""
    doc: dict[str, Any] = {
        "request": {**(req if req is not None else request()), **request_overrides},
        "contract": con if con is not None else contract(),
        "candidates": list(candidates),
    }
    if directory is not None:
        doc["directory"] = directory
    return doc


def compile_doc(doc: dict[str, Any]) -> CompileOutput:
    return compile_input(load_input(doc))


def canonical(out: CompileOutput) -> str:
    return json.dumps(out.to_json(), sort_keys=True)


def rejection(out: CompileOutput, cid: str) -> tuple[str, str | None] | None:
    for r in out.rejected:
        if r["id"] == cid:
            return (str(r["reason"]), None if r["detail"] is None else str(r["detail"]))
    return None


def states(out: CompileOutput) -> dict[str, str]:
    return {s.proposition: str(s.state) for s in out.slots}


def assert_refused(out: CompileOutput, pass_: str, reason: str) -> None:
    """A refusal names its pass and reason, keeps the trace so far, and releases nothing."""
    assert out.result == "refused", out.to_json()
    assert out.refusal is not None
    as_json = out.to_json()
    assert as_json["refusal"]["pass"] == pass_
    assert as_json["refusal"]["reason"] == reason
    assert out.packet == ()
    assert as_json["packet"] == []
    assert out.plan_id is None
    assert out.tokens_used == 0
    assert out.slots == ()
    assert out.decision_ready is False
    # The trace so far: it starts at parse and ends with the refusing pass's refusal entry.
    trace = as_json["trace"]
    assert trace[0]["pass"] == "parse"
    assert trace[-1] == {
        "id": None,
        "pass": pass_,
        "outcome": "refused",
        "reason": reason,
        "detail": as_json["refusal"]["detail"],
    }
