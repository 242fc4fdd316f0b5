"""Each operator's plain-language label for one perturbation ("one day later",
"facility-F102 (facility record) hidden").
"""

from __future__ import annotations

from collections.abc import Callable

from compiler._input import CompileInput
from compiler._perturb.arguments import Perturbation


def _class_of(document: CompileInput, item_id: str) -> str:
    item = next((c for c in document.candidates if c.id == item_id), None)
    return item.evidence_class.replace("_", " ") if item is not None else "unknown class"


def _days(p: Perturbation, _: CompileInput) -> str:
    days = p.args["days"]
    if abs(days) == 1:
        return "one day later" if days > 0 else "one day earlier"
    return f"{abs(days)} days {'later' if days > 0 else 'earlier'}"


def _item_label(verb: str) -> Callable[[Perturbation, CompileInput], str]:
    def label(p: Perturbation, document: CompileInput) -> str:
        item = p.args["candidate_id"]
        return f"{item} ({_class_of(document, item)}) {verb}"

    return label


def _substitute_label(p: Perturbation, _: CompileInput) -> str:
    return f"{p.args['candidate_id']} recast as a {p.args['evidence_class'].replace('_', ' ')}"


def _principal_label(p: Perturbation, _: CompileInput) -> str:
    return f"asked by {p.args['principal']} ({', '.join(p.args['roles'])})"


def _weak_label(p: Perturbation, _: CompileInput) -> str:
    classes = " or ".join(c.replace("_", " ") for c in p.args["weak_classes"])
    return f"a {classes} claiming approval of each proposition"


def _contradict_label(p: Perturbation, document: CompileInput) -> str:
    spec = document.contract.proposition(p.args["proposition"])
    cls = p.args.get("evidence_class") or (
        spec.accepted_classes[0] if spec and spec.accepted_classes else "?"
    )
    return f"a {cls.replace('_', ' ')} contradicting {p.args['proposition']}"


def _fixed(text: str) -> Callable[[Perturbation, CompileInput], str]:
    return lambda p, document: text


def _promote_classes_label(p: Perturbation, _: CompileInput) -> str:
    return f"an item of each of {len(p.args['classes'])} other classes claiming each proposition"


def _contradict_classes_label(p: Perturbation, _: CompileInput) -> str:
    return "; ".join(
        f"{key} contradicted by a {cls.replace('_', ' ')}" for key, cls in p.args["classes"].items()
    )
