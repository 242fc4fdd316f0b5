"""Lint rules for a contract document, kept as data: a registry of small checks keyed by code.

The compiler would accept every one of these contracts; the lint says why a policy owner
probably did not mean it. Rules read the plain document (the one `contracts.documents`
builds) and the source-class catalogue, so they apply equally to drafts, snapshots and
imported bundles. Add a rule by decorating a function with `@rule(code, severity, title)`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from .models import SourceClass


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class Finding:
    code: str
    severity: Severity
    message: str
    proposition: str | None = None


Check = Callable[[dict[str, Any], Mapping[str, SourceClass]], Iterable[tuple[str | None, str]]]


@dataclass(frozen=True)
class Rule:
    code: str
    severity: Severity
    title: str
    check: Check


RULES: dict[str, Rule] = {}


def rule(code: str, severity: Severity, title: str) -> Callable[[Check], Check]:
    def register(check: Check) -> Check:
        RULES[code] = Rule(code=code, severity=severity, title=title, check=check)
        return check

    return register


def _propositions(document: dict[str, Any]) -> list[dict[str, Any]]:
    return list(document.get("propositions") or [])


@rule("no_propositions", Severity.ERROR, "No proposition")
def _no_propositions(document, classes):
    if not _propositions(document):
        yield None, "The contract has no proposition, so a decision can rest on nothing."


@rule("no_accepted_class", Severity.ERROR, "Proposition with no accepted class")
def _no_accepted_class(document, classes):
    for proposition in _propositions(document):
        if not proposition.get("accepted_classes"):
            key = proposition.get("key")
            yield key, f"'{key}' accepts no source class, so it can never be supported."


@rule("weak_class_accepted", Severity.WARNING, "Weak class accepted")
def _weak_class_accepted(document, classes):
    for proposition in _propositions(document):
        key = proposition.get("key")
        for class_key in proposition.get("accepted_classes") or []:
            source_class = classes.get(class_key)
            if source_class is not None and source_class.weak:
                yield (
                    key,
                    (
                        f"'{key}' accepts the weak class '{class_key}': such a source can then "
                        "establish it on its own."
                    ),
                )


@rule("duplicate_key", Severity.ERROR, "Duplicate proposition key")
def _duplicate_key(document, classes):
    counts = Counter(p.get("key") for p in _propositions(document))
    for key, count in sorted(counts.items(), key=lambda item: str(item[0])):
        if count > 1:
            yield key, f"'{key}' is used by {count} propositions; keys must be unique."


@rule("no_purposes", Severity.ERROR, "No permitted purpose")
def _no_purposes(document, classes):
    if not document.get("purposes"):
        yield None, "No purpose is permitted, so the compiler refuses every request."


@rule("class_not_carriable", Severity.ERROR, "Class no candidate can carry")
def _class_not_carriable(document, classes):
    for proposition in _propositions(document):
        key = proposition.get("key")
        for class_key in proposition.get("accepted_classes") or []:
            source_class = classes.get(class_key)
            if source_class is None:
                yield (
                    key,
                    (
                        f"'{key}' accepts '{class_key}', which is not in the source-class "
                        "catalogue, so no candidate can carry it."
                    ),
                )
            elif source_class.retired:
                yield (
                    key,
                    (
                        f"'{key}' accepts '{class_key}', which is retired: no system produces it "
                        "any more, so no candidate can carry it."
                    ),
                )


def lint_document(document: dict[str, Any], classes: Mapping[str, SourceClass]) -> list[Finding]:
    return list(_findings(document, classes))


def errors(findings: Iterable[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity == Severity.ERROR]


def warnings(findings: Iterable[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity == Severity.WARNING]


def _findings(document: dict[str, Any], classes: Mapping[str, SourceClass]) -> Iterator[Finding]:
    for registered in RULES.values():
        for proposition, message in registered.check(document, classes):
            yield Finding(
                code=registered.code,
                severity=registered.severity,
                message=message,
                proposition=proposition,
            )
