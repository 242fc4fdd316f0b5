"""What the scenario pages (corpora, scenarios, runs) share beyond `helpers`: their templates'
folder, warnings as messages and the lock value an edit form posted."""

from __future__ import annotations

from typing import Any

from django.contrib import messages

from workbench.http import HtmxRequest

from .helpers import page_or_partial

WARNING = "Warning: {warning}"

# What an edit without its form's lock value is compared as: never current, so a post that
# does not say which revision it was based on is refused (409) rather than saved blindly.
NO_LOCK = -1


def _template(request: HtmxRequest, page: str, partial: str) -> str:
    return page_or_partial(request, f"scenarios/{page}.html", partial)


def _warn(request: HtmxRequest, warnings: list[Any]) -> None:
    """Saved, but with values the catalogue or the contract does not know: say where."""
    for warning in warnings:
        messages.warning(request, WARNING.format(warning=warning))


def _lock(value: int | None) -> int:
    """The lock value an edit form posted; a post without one is never current."""
    return NO_LOCK if value is None else value
