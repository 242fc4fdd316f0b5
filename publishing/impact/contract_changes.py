"""The contract half of the impact report: what changes from the published contract to
this version, as sentences (also the structural diff of any two versions)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .sentences import names, ordinal


def _change(kind: str, text: str, proposition: str | None = None) -> dict[str, Any]:
    return {"kind": kind, "proposition": proposition, "text": text}


def contract_changes(
    before: Mapping[str, Any] | None, after: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """What changes from `before` (the published contract) to `after`, as sentences."""
    if before is None:
        keys = [p["key"] for p in after["propositions"]]
        return [
            _change(
                "first_version",
                "Nothing has been published for this decision type yet, so everything in this "
                f"version is new: {len(keys)} proposition(s), {names(keys)}.",
            )
        ]
    changes: list[dict[str, Any]] = []
    old = {p["key"]: p for p in before["propositions"]}
    new = {p["key"]: p for p in after["propositions"]}
    for key, proposition in new.items():
        if key not in old:
            classes = proposition["accepted_classes"]
            blocks = "a gap blocks the decision" if proposition["required"] else "optional"
            changes.append(
                _change(
                    "proposition_added",
                    f"Adds the fact '{key}', established by {names(classes)} "
                    f"(in that order of preference; {blocks}).",
                    key,
                )
            )
    for key in old:
        if key not in new:
            changes.append(
                _change(
                    "proposition_removed",
                    f"Removes the fact '{key}': packets will no longer have a slot for it.",
                    key,
                )
            )
    for key, proposition in new.items():
        if key in old:
            changes += _proposition_changes(old[key], proposition)
    common_old = [k for k in old if k in new]
    common_new = [k for k in new if k in old]
    if common_old != common_new:
        changes.append(
            _change(
                "proposition_order",
                "Changes the order in which facts are filled when the budget is tight: "
                f"now {names(common_new)} (was {names(common_old)}).",
            )
        )
    changes += _purpose_changes(before.get("purposes", []), after.get("purposes", []))
    changes += _policy_changes(before.get("policy", {}), after.get("policy", {}))
    return changes


def _proposition_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[dict[str, Any]]:
    key = new["key"]
    changes = []
    before, after = list(old["accepted_classes"]), list(new["accepted_classes"])
    added = [c for c in after if c not in before]
    removed = [c for c in before if c not in after]
    for name in added:
        changes.append(
            _change(
                "class_added",
                f"'{key}' may now be established by '{name}' "
                f"(its {ordinal(after.index(name) + 1)} choice of {len(after)}).",
                key,
            )
        )
    for name in removed:
        changes.append(
            _change(
                "class_removed",
                f"'{key}' can no longer be established by '{name}'.",
                key,
            )
        )
    kept_before = [c for c in before if c in after]
    kept_after = [c for c in after if c in before]
    if kept_before != kept_after:
        changes.append(
            _change(
                "class_order",
                f"'{key}' changes which evidence it prefers when several kinds are available: "
                f"now {names(after)}, most preferred first (was {names(before)}).",
                key,
            )
        )
    if old["required"] != new["required"]:
        text = (
            f"A gap in '{key}' now blocks the decision (it was optional)."
            if new["required"]
            else f"A gap in '{key}' no longer blocks the decision (it becomes optional)."
        )
        changes.append(_change("required", text, key))
    if old.get("max_items", 1) != new.get("max_items", 1):
        changes.append(
            _change(
                "max_items",
                f"'{key}' may now carry up to {new.get('max_items', 1)} supporting item(s) "
                f"(was {old.get('max_items', 1)}).",
                key,
            )
        )
    if old.get("description", "") != new.get("description", ""):
        changes.append(_change("description", f"The description of '{key}' changes.", key))
    return changes


def _purpose_changes(before: Sequence[str], after: Sequence[str]) -> list[dict[str, Any]]:
    changes = []
    added = [p for p in after if p not in before]
    removed = [p for p in before if p not in after]
    if added:
        changes.append(
            _change("purposes", f"The contract may now be used for {names(added)} as well.")
        )
    if removed:
        changes.append(
            _change(
                "purposes",
                f"The contract may no longer be used for {names(removed)}: such requests "
                "will be refused.",
            )
        )
    return changes


POLICY_WORDS = {
    "name": "the policy's name",
    "version": "the policy's version",
    "min_relevance": "the minimum relevance for optional items",
    "mandatory_form": "how mandatory items are sized",
    "role_order": "the order of the packet's sections",
    "on_overrun": "what happens when the packet is over budget",
}


def _policy_changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[dict[str, Any]]:
    changes = []
    for field, words in POLICY_WORDS.items():
        if before.get(field) != after.get(field):
            old, new = before.get(field), after.get(field)
            if isinstance(new, list):
                old, new = ", ".join(old or []), ", ".join(new)
            changes.append(
                _change("policy", f"The assembly policy changes {words} from {old} to {new}.")
            )
    return changes
