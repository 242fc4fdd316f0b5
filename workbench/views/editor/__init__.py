"""The contract editor: a decision type's current version, its propositions and settings,
the lint, preview and history panels, and the people who hold a role on the type.

- `pages`: the page, its panels, the contract as the compiler receives it, the settings;
- `propositions`: add, edit, delete and reorder propositions and their accepted classes;
- `people`: grant and revoke roles on the type;
- `fragments`: what they share, above all `edit`, the one way a view applies a change and
  answers (the editor fragment for htmx, with the event on which the other panels refresh).

Permission is checked in the views and the selectors, never only in a template: a client can
ask for any fragment directly.
"""

from __future__ import annotations

from . import people, propositions
from .pages import (
    decision_type_detail,
    version_contract_json,
    version_detail,
    version_panel,
    version_settings,
)

__all__ = [
    "decision_type_detail",
    "people",
    "propositions",
    "version_contract_json",
    "version_detail",
    "version_panel",
    "version_settings",
]
