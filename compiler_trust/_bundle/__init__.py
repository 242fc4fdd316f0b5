"""Signed contract bundles: the format, its hash, Ed25519 signatures, verification, and
compiling against a verified bundle. Pure: no clock, network, randomness or file IO here (key
generation and key files live in `compiler_trust._keys`); the caller supplies `published_at`.

A bundle is one JSON object (docs/bundles.md has the full description)::

    {"format": "evidence-workbench.bundle/3",
     "manifest": {"decision_type", "version", "parent_sha256", "author",
                  "publisher": {"person", "key_id"}, "editors": [{"person", "key_id"}],
                  "approvers": [{"person", "key_id"}], "published_at", "compiler_version",
                  "report_sha256", "tests": {"sha256", "count"}},
     "contract": {...compiler.models.Contract...},
     "source_classes": [{"key", "label", "description", "authority_tier", "weak"}],
     "sha256": "<hex sha256 of the RFC 8785 form of every other member but signatures>",
     "signatures": [{"signer", "role", "key_id", "algorithm": "ed25519", "signature"}]}

* `manifest.tests` names the test suite (`suite`: the scenarios with their expectations,
  `{"format": "evidence-workbench.suite/1", ..., "scenarios": [...]}`) by the sha256 of its
  RFC 8785 form, so the signatures cover it while the bundle does not carry it. Format 2
  (`evidence-workbench.bundle/2`) carried `scenarios` in the bundle instead, and no
  `manifest.tests`; it is still read, verified and signed.

* `sha256` covers everything except `sha256` and `signatures`: `bundle_body_hash`.
* Each signature is Ed25519 over the 64 ASCII bytes of that hex digest, base64 (standard
  alphabet, padded). Signer names are not signed directly; they are bound by the hashed
  manifest instead: the one publisher signature must be by `manifest.publisher` with the key
  it names, and the approver signatures by exactly the people in `manifest.approvers`, each
  with the key named for them.
* Four eyes: no approver is the publisher or an editor (everyone who created or edited the
  version), and no approval key is the publisher's or an editor's; the trusted key set must
  let the publisher's key `publish` and each approval key `approve` (`compiler_trust._keys`).
* The file form is the RFC 8785 canonical bytes of the whole bundle plus one newline
  (`serialize_bundle`). Signing is deterministic (Ed25519), so exporting the same version
  twice gives identical bytes, and `verify_bundle` on bytes insists on exactly that form, so
  changing any single byte of a bundle file makes verification fail.

Public API: `sign_bundle`, `serialize_bundle`, `verify_bundle` -> `VerifiedBundle`,
`inspect_bundle` (integrity without keys), `compile_input_from_bundle`, `scenario_input`,
`split_suite`, `verify_suite`, `serialize_suite`,
`bundle_body_hash`, `BundleInvalid` (with a reason constant per four-eyes and key-role
refusal), with `TrustedKey`, `key_id` and `load_public_keys` from the keys module; all of them
from `compiler_trust`.

The package keeps one concern per module: `reasons` (the format's names, `Problem`,
`BundleInvalid` and every reason constant), `document` (the pydantic models), `hashing` (what
the sha256 covers and the file form), `checks` (four eyes, the signature set, statements, key
roles), `signing`, `verification`, `compiling` and `suite` (the test suite).
"""
