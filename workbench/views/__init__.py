"""Every page of the workbench, one module per page area: `editor` (dashboard, catalogue, the
contract editor), `review` (versions, review, impact report, bundles, signing keys) and
`scenarios` (corpora, scenarios, runs, the flip matrix). Shared helpers live beside them."""
