"""Making a draft say what an imported contract file says, through the editor's services.

An import (`publishing.contract_import`) that is confirmed changes the draft's purposes,
policy, propositions and accepted classes to the file's. It does so edit by edit with the
same `contracts.services` the editor calls (`version_update_settings`, `proposition_add`,
`proposition_update`, `proposition_delete`, `proposition_move`, `accepted_class_add`,
`accepted_class_remove`, `accepted_class_move`), so each change is permission-checked,
validated and audited exactly as if the owner had made it in the editor, and the caller's
transaction makes them one change: all of them, or none.

The caller holds the draft's row lock and has checked its lock version against the one the
preview showed; each service then gets the lock version the previous one left. The file's
`version` is not applied (the draft keeps its number), nor are its `source_classes`: the
catalogue is shared and changed by catalogue managers only. `mandatory_form` and
`on_overrun` have one allowed value each, so there is nothing to apply for them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.core.exceptions import ValidationError

from contracts import services
from contracts.models import ContractVersion, Proposition, SourceClass
from contracts.models.catalogue import KEY_HELP, key_validator
from contracts.services import Actor

# Messages tests assert on (the location names the field, as invalid files do).
CLASS_PROBLEM = "{file}: contract.propositions.{index}.accepted_classes: {problem}"
KEY_PROBLEM = "{file}: {field}: {value!r} is not a key the workbench stores: {help}"


def check_keys(target: Mapping[str, Any], *, file: str) -> None:
    """Refuse, at the preview, a file whose policy name, purposes or proposition keys the
    compiler reads but the workbench's editor would refuse (its keys are lower-case words
    joined by underscores), rather than fail part way through applying it."""
    named = [("contract.policy.name", target["policy"]["name"])]
    named += [(f"contract.purposes.{i}", purpose) for i, purpose in enumerate(target["purposes"])]
    named += [(f"contract.propositions.{i}.key", p["key"])
              for i, p in enumerate(target["propositions"])]  # fmt: skip
    for field, value in named:
        try:
            key_validator(value)
        except ValidationError:
            problem = KEY_PROBLEM.format(file=file, field=field, value=value, help=KEY_HELP)
            raise ValidationError({field: problem}) from None


def check_classes(target: Mapping[str, Any], draft: Mapping[str, Any] | None, *, file: str) -> None:
    """Refuse a file whose propositions accept a class the catalogue does not have, or a
    retired one the draft's proposition does not already accept (the editor refuses to add
    one); the message names the file and the field."""
    accepted_now = {p["key"]: set(p["accepted_classes"]) for p in (draft or {}).get(
        "propositions", [])}  # fmt: skip
    wanted = {c for p in target["propositions"] for c in p["accepted_classes"]}
    catalogue = {c.key: c for c in SourceClass.objects.filter(key__in=wanted)}
    for index, proposition in enumerate(target["propositions"]):
        for key in proposition["accepted_classes"]:
            problem = None
            if key not in catalogue:
                problem = services.UNKNOWN_CLASS.format(key=key)
            elif catalogue[key].retired and key not in accepted_now.get(proposition["key"], ()):
                problem = services.RETIRED_CLASS.format(key=key)
            if problem is not None:
                field = f"contract.propositions.{index}.accepted_classes"
                raise ValidationError(
                    {field: CLASS_PROBLEM.format(file=file, index=index, problem=problem)}
                )


def _lock(version: ContractVersion) -> int:
    return ContractVersion.objects.values_list("lock_version", flat=True).get(pk=version.pk)


def _settings(target: Mapping[str, Any]) -> dict[str, Any]:
    policy = target["policy"]
    return {
        "purposes": list(target["purposes"]),
        "policy_name": policy["name"],
        "policy_version": policy["version"],
        "min_relevance": policy["min_relevance"],
        "role_order": list(policy["role_order"]),
    }


def _propositions(version: ContractVersion) -> list[Proposition]:
    return list(Proposition.objects.filter(version=version).order_by("position", "id"))


def _move_into_order(keys: Sequence[str], current: list[str], move) -> None:
    """Bring `current` into the order of `keys` (the same items) one step up at a time."""
    for index, key in enumerate(keys):
        at = current.index(key)
        while at > index:
            move(key)
            current[at - 1], current[at] = current[at], current[at - 1]
            at -= 1


def _apply_classes(actor: Actor, version: ContractVersion, proposition: Proposition,
                   wanted: Sequence[str]) -> None:  # fmt: skip
    for key in wanted:
        if key not in proposition.accepted_classes:
            proposition = services.accepted_class_add(
                actor=actor, proposition=proposition, expected_lock_version=_lock(version),
                class_key=key,
            )  # fmt: skip
    for key in [c for c in proposition.accepted_classes if c not in wanted]:
        proposition = services.accepted_class_remove(
            actor=actor, proposition=proposition, expected_lock_version=_lock(version),
            class_key=key,
        )  # fmt: skip
    holder = {"proposition": proposition}

    def move(key: str) -> None:
        holder["proposition"] = services.accepted_class_move(
            actor=actor, proposition=holder["proposition"],
            expected_lock_version=_lock(version), class_key=key, direction="up",
        )  # fmt: skip

    _move_into_order(wanted, list(proposition.accepted_classes), move)


def apply_contract(*, actor: Actor, version: ContractVersion, target: Mapping[str, Any]) -> None:
    """Change `version`'s rows, edit by edit, until its document is `target` (a compiler
    contract document with every default filled in). The caller holds the row lock."""
    settings = _settings(target)
    if settings != {field: getattr(version, field) for field in settings}:
        version = services.version_update_settings(
            actor=actor, version=version, expected_lock_version=_lock(version), **settings
        )
    wanted = {p["key"]: p for p in target["propositions"]}
    for proposition in _propositions(version):
        if proposition.key not in wanted:
            services.proposition_delete(
                actor=actor, proposition=proposition, expected_lock_version=_lock(version)
            )
    existing = {p.key: p for p in _propositions(version)}
    for key, spec in wanted.items():
        fields = {"description": spec["description"], "required": spec["required"],
                  "max_items": spec["max_items"]}  # fmt: skip
        current = existing.get(key)
        if current is None:
            services.proposition_add(
                actor=actor, version=version, expected_lock_version=_lock(version), key=key,
                accepted_classes=spec["accepted_classes"], **fields,
            )  # fmt: skip
            continue
        if fields != {name: getattr(current, name) for name in fields}:
            current = services.proposition_update(
                actor=actor, proposition=current, expected_lock_version=_lock(version),
                key=key, **fields,
            )  # fmt: skip
        _apply_classes(actor, version, current, spec["accepted_classes"])
    by_key = {p.key: p for p in _propositions(version)}

    def move(key: str) -> None:
        services.proposition_move(
            actor=actor, proposition=by_key[key], expected_lock_version=_lock(version),
            direction="up",
        )  # fmt: skip

    _move_into_order(list(wanted), [p.key for p in _propositions(version)], move)
