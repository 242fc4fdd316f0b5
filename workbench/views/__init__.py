"""Every page of the workbench, one module per page area, over the services and selectors of
the layers below:

- `dashboard`, `catalogue` (source classes and proposals);
- the contract editor, a package: `editor` (`pages`: the page, its panels and settings;
  `propositions`; `people`; `fragments`: what they share, its one edit helper);
- review and publishing: `versions` (history, diff, new draft), `review` (review card, impact
  report, transitions), `keys` (signing keys, bundle download);
- scenarios: `corpora`, `scenario_pages`, `runs` (suite, run, flip matrix, diffs, coverage),
  `strength` (a version's Suite strength panel); `scenarios` re-exports the first three
  under their old module name.

Shared pieces: `helpers` (page-or-partial, form errors, 409/422 answers, permission checks,
the 400 handler), `parameters` (query parameters), `scenario_common`.
"""
