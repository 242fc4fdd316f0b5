"""Problems that span several parts of a compile input, found on the raw document.

They run on the raw JSON (not on validated models) so that they are reported together with
pydantic's field errors: a document with a negative token count *and* a duplicate id lists
both. Every check tolerates malformed parts, which pydantic reports on its own.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping
from typing import Any, TypeGuard

Location = tuple[str | int, ...]
Problem = tuple[Location, str]

DEFAULT_POLICY_NAME = "default"
DEFAULT_POLICY_VERSION = 1
DEFAULT_REQUIREMENT = "preferred"
MAX_SAFE_INTEGER = 2**53 - 1
"""RFC 8785 numbers are IEEE doubles: the contract hash and the plan id cannot carry a larger
integer, so one is invalid input rather than a crash in the attest pass."""


def cross_reference_problems(document: Any) -> list[Problem]:
    if not isinstance(document, Mapping):
        return []
    candidates = document.get("candidates")
    problems: list[Problem] = []
    if isinstance(candidates, list | tuple):
        problems.extend(_candidate_problems(candidates))
    problems.extend(_policy_problems(document))
    return problems


def may_have_problems(model: Any) -> bool:
    """Whether a validated `CompileInput` (candidates in id order) could carry any problem the
    raw-document checks report: one pass over the models, with no locations. Only when it
    answers yes are the raw checks run, to name each problem where the caller wrote it."""
    request, contract = model.request, model.contract
    policy = contract.policy
    expected = request.expected_policy
    if expected is not None and (expected.name, expected.version) != (policy.name, policy.version):
        return True
    if (
        max(
            request.token_budget,
            policy.version,
            *(p.max_items for p in contract.propositions),
            expected.version if expected is not None else 0,
        )
        > MAX_SAFE_INTEGER
    ):
        return True
    candidates = model.candidates
    ids = {c.id for c in candidates}
    if len(ids) != len(candidates):
        return True
    successor: dict[str, str] = {}
    group_classes: dict[str, set[str]] = {}
    required_groups: set[str] = set()
    for c in candidates:
        if c.tokens > MAX_SAFE_INTEGER or (c.floor is not None and c.floor > MAX_SAFE_INTEGER):
            return True
        for form in c.forms:
            if form.rank > MAX_SAFE_INTEGER or form.tokens > MAX_SAFE_INTEGER:
                return True
        # A reference outside the pool is no problem (docs/design.md, "Pools as retrievers
        # return them"); only a loop through the pool is.
        if c.superseded_by is not None and c.superseded_by in ids:
            successor[c.id] = c.superseded_by
        if c.group is not None:
            group_classes.setdefault(c.group, set()).add(c.requirement.value)
            if c.group_required:
                required_groups.add(c.group)
    if any(len(group_classes[g]) > 1 for g in required_groups):
        return True
    return bool(_cycles(successor))


def unsafe_integer_problems(document: Any) -> list[Problem]:
    """Integers above what RFC 8785 can hash, wherever a compile input may carry one."""
    if not isinstance(document, Mapping):
        return []
    problems: list[Problem] = []
    candidates = document.get("candidates")
    if isinstance(candidates, list | tuple):
        problems.extend(_candidate_integer_problems(candidates))
    problems.extend(_request_and_contract_integer_problems(document))
    return problems


def _too_large(value: object) -> TypeGuard[int]:
    return type(value) is int and value > MAX_SAFE_INTEGER


def _too_large_problem(loc: Location, value: int) -> Problem:
    return loc, (
        f"{value} is too large: the output is hashed as RFC 8785 JSON, "
        f"whose integers stop at {MAX_SAFE_INTEGER}"
    )


def _candidate_integer_problems(candidates: list[Any] | tuple[Any, ...]) -> Iterator[Problem]:
    for index, item in _indexed(candidates):
        for name in ("tokens", "floor"):
            if _too_large(value := item.get(name)):
                yield _too_large_problem(("candidates", index, name), value)
        forms = item.get("forms")
        if isinstance(forms, list | tuple):
            for position, form in enumerate(forms):
                if isinstance(form, Mapping):
                    for name in ("rank", "tokens"):
                        if _too_large(value := form.get(name)):
                            loc = ("candidates", index, "forms", position, name)
                            yield _too_large_problem(loc, value)


def _request_and_contract_integer_problems(document: Mapping[str, Any]) -> Iterator[Problem]:
    request = document.get("request")
    if isinstance(request, Mapping):
        if _too_large(value := request.get("token_budget")):
            yield _too_large_problem(("request", "token_budget"), value)
        expected = request.get("expected_policy")
        if isinstance(expected, Mapping) and _too_large(value := expected.get("version")):
            yield _too_large_problem(("request", "expected_policy", "version"), value)
    contract = document.get("contract")
    if not isinstance(contract, Mapping):
        return
    policy = contract.get("policy")
    if isinstance(policy, Mapping) and _too_large(value := policy.get("version")):
        yield _too_large_problem(("contract", "policy", "version"), value)
    propositions = contract.get("propositions")
    if isinstance(propositions, list | tuple):
        for index, item in enumerate(propositions):
            if isinstance(item, Mapping) and _too_large(value := item.get("max_items")):
                yield _too_large_problem(("contract", "propositions", index, "max_items"), value)


def _indexed(candidates: list[Any] | tuple[Any, ...]) -> Iterator[tuple[int, Mapping[str, Any]]]:
    for index, item in enumerate(candidates):
        if isinstance(item, Mapping):
            yield index, item


def _candidate_problems(candidates: list[Any] | tuple[Any, ...]) -> Iterator[Problem]:
    first_index: dict[str, int] = {}
    for index, item in _indexed(candidates):
        item_id = item.get("id")
        if not isinstance(item_id, str):
            continue
        if item_id in first_index:
            yield (
                ("candidates", index, "id"),
                f"duplicate candidate id '{item_id}' "
                f"(first used at candidates[{first_index[item_id]}])",
            )
        else:
            first_index[item_id] = index

    group_classes: dict[str, dict[str, int]] = defaultdict(dict)
    required_groups: set[str] = set()
    looping = _on_supersession_cycles(candidates, first_index)
    for index, item in _indexed(candidates):
        # `superseded_by` and `depends_on` may name ids outside the pool (docs/design.md,
        # "Pools as retrievers return them"): only a loop through the pool is a problem.
        replaced_by = item.get("superseded_by")
        if (
            isinstance(replaced_by, str)
            and isinstance(item_id := item.get("id"), str)
            and (
                # (an id that is no string, reported by pydantic, is on no loop: nothing names it)
                item_id in looping
                if first_index.get(item_id) == index
                else _supersession_loops(item, candidates, first_index)
            )
        ):
            yield (
                ("candidates", index, "superseded_by"),
                f"superseded_by '{replaced_by}' leads back to '{item.get('id')}': "
                "a candidate cannot (even indirectly) supersede itself",
            )
        group = item.get("group")
        if isinstance(group, str):
            requirement = item.get("requirement", DEFAULT_REQUIREMENT)
            group_classes[group].setdefault(str(requirement), index)
            if item.get("group_required") is True:
                required_groups.add(group)

    for group in sorted(required_groups):
        classes = group_classes[group]
        if len(classes) > 1:
            index = max(classes.values())
            names = ", ".join(sorted(classes))
            yield (
                ("candidates", index, "group"),
                f"required group '{group}' spans more than one requirement class ({names})",
            )


def _on_supersession_cycles(
    candidates: list[Any] | tuple[Any, ...], first_index: Mapping[str, int]
) -> set[str]:
    """The ids (of first occurrences) whose `superseded_by` chain leads back to themselves.

    Each id names at most one successor, so every walk ends in a cycle, a missing id or the
    end of the chain; each id is walked once, which keeps a long chain linear.
    """
    successor: dict[str, str] = {}
    for item_id, index in first_index.items():
        item = candidates[index]
        nxt = item.get("superseded_by")
        if isinstance(nxt, str) and nxt in first_index:
            successor[item_id] = nxt
    return _cycles(successor)


def _cycles(successor: Mapping[str, str]) -> set[str]:
    """The ids on a cycle of a graph where each id names at most one successor."""
    done: set[str] = set()
    looping: set[str] = set()
    for start in successor:
        path: dict[str, None] = {}
        current: str | None = start
        while current is not None and current not in done and current not in path:
            path[current] = None
            current = successor.get(current)
        if current is not None and current in path:
            ring = list(path)
            looping.update(ring[ring.index(current) :])
        done.update(path)
    return looping


def _supersession_loops(
    item: Mapping[str, Any],
    candidates: list[Any] | tuple[Any, ...],
    first_index: Mapping[str, int],
) -> bool:
    start = item.get("id")
    seen: set[str] = set()
    current: Any = item.get("superseded_by")
    while isinstance(current, str) and current in first_index and current not in seen:
        if current == start:
            return True
        seen.add(current)
        successor = candidates[first_index[current]]
        current = successor.get("superseded_by") if isinstance(successor, Mapping) else None
    return False


def _policy_problems(document: Mapping[str, Any]) -> Iterator[Problem]:
    request = document.get("request")
    contract = document.get("contract")
    if not isinstance(request, Mapping) or not isinstance(contract, Mapping):
        return
    expected = request.get("expected_policy")
    if not isinstance(expected, Mapping):
        return
    policy = contract.get("policy")
    policy = policy if isinstance(policy, Mapping) else {}
    actual = (
        policy.get("name", DEFAULT_POLICY_NAME),
        policy.get("version", DEFAULT_POLICY_VERSION),
    )
    wanted = (expected.get("name"), _as_int(expected.get("version")))
    actual = (actual[0], _as_int(actual[1]))
    if wanted != actual:
        yield (
            ("request", "expected_policy"),
            f"the request expects policy {wanted[0]!r} version {wanted[1]!r}, "
            f"but the contract carries {actual[0]!r} version {actual[1]!r}",
        )


def _as_int(value: Any) -> Any:
    """Versions compare as the integers validation makes of them ("1" and 1 are one version)."""
    try:
        return int(value)
    except (TypeError, ValueError):
        return value
