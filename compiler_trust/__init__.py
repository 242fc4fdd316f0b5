"""Signing and trust for the context compiler: keys, signed statements, contract bundles and
receipts, over the canonical form (RFC 8785) the engine hashes with.

    from compiler_trust import load_public_keys, verify_bundle
    bundle = verify_bundle(data, load_public_keys(path))

Reads key files (`load_public_keys`, `write_key_files`) but no clock or network: a caller
supplies every date. Every public name is here; the modules behind them are private, and
load when one of their names is first used (a compile without a bundle imports none).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from compiler._lazy import lazy_surface

if TYPE_CHECKING:
    from compiler._canonical import canonical_bytes, sha256_hex
    from compiler_trust._bundle.compiling import compile_input_from_bundle, scenario_input
    from compiler_trust._bundle.document import Manifest, SuiteDigest, VerifiedBundle
    from compiler_trust._bundle.hashing import (
        bundle_body,
        bundle_body_hash,
        normalise_body,
        serialize_bundle,
    )
    from compiler_trust._bundle.reasons import (
        APPROVER_IS_PUBLISHER,
        FORMAT,
        FORMAT_2,
        KEY_MAY_NOT_SIGN_TYPE,
        KEY_SET_WITHOUT_TYPES,
        READ_FORMATS,
        STATEMENT_OTHER_CONTRACT,
        SUITE_FORMAT,
        TOO_FEW_APPROVALS,
        BundleInvalid,
        Problem,
        SuiteInvalid,
    )
    from compiler_trust._bundle.signing import assemble_bundle, sign_bundle
    from compiler_trust._bundle.suite import (
        ScenarioSuite,
        serialize_suite,
        split_suite,
        suite_digest,
        verify_suite,
    )
    from compiler_trust._bundle.verification import inspect_bundle, verify_bundle
    from compiler_trust._key_files import (
        load_private_key_file,
        load_public_keys,
        write_key_files,
    )
    from compiler_trust._keys import (
        KEY_ROLES,
        KEY_SET_FILE,
        KEY_SET_FORMAT,
        KeyLoadError,
        TrustedKey,
        generate_key_pair,
        key_id,
        key_set_json,
        load_private_key,
        load_public_key,
        parse_key_set,
        private_key_pem,
        public_key_pem,
    )
    from compiler_trust._receipts import (
        CARRIES_CONTENT,
        FORMAT_COMPACT,
        Receipt,
        ReceiptHeader,
        ReceiptInvalid,
        check_receipt,
        compact_receipt,
        content_sha256,
        expand_receipt,
        make_receipt,
        parse_receipt,
        receipt_header,
        replay,
    )
    from compiler_trust._statements import (
        MAX_CLOCK_SKEW,
        ApprovalStatement,
        PublicationStatement,
        SignedStatement,
        StatementInvalid,
        parse_signed_statement,
        sign_as,
        sign_statement,
        signing_date_problem,
        statement_bytes,
        verify_statement,
    )

_HOMES = {
    "compiler._canonical": ["canonical_bytes", "sha256_hex"],
    "compiler_trust._keys": [
        "KEY_ROLES",
        "KEY_SET_FILE",
        "KEY_SET_FORMAT",
        "KeyLoadError",
        "TrustedKey",
        "generate_key_pair",
        "key_id",
        "key_set_json",
        "load_private_key",
        "load_public_key",
        "parse_key_set",
        "private_key_pem",
        "public_key_pem",
    ],
    "compiler_trust._key_files": ["load_private_key_file", "load_public_keys", "write_key_files"],
    "compiler_trust._statements": [
        "ApprovalStatement",
        "MAX_CLOCK_SKEW",
        "PublicationStatement",
        "SignedStatement",
        "StatementInvalid",
        "parse_signed_statement",
        "sign_as",
        "sign_statement",
        "signing_date_problem",
        "statement_bytes",
        "verify_statement",
    ],
    "compiler_trust._bundle.reasons": [
        "APPROVER_IS_PUBLISHER",
        "BundleInvalid",
        "FORMAT",
        "FORMAT_2",
        "KEY_MAY_NOT_SIGN_TYPE",
        "KEY_SET_WITHOUT_TYPES",
        "Problem",
        "READ_FORMATS",
        "STATEMENT_OTHER_CONTRACT",
        "SUITE_FORMAT",
        "SuiteInvalid",
        "TOO_FEW_APPROVALS",
    ],
    "compiler_trust._bundle.document": ["Manifest", "SuiteDigest", "VerifiedBundle"],
    "compiler_trust._bundle.suite": [
        "ScenarioSuite",
        "serialize_suite",
        "split_suite",
        "suite_digest",
        "verify_suite",
    ],
    "compiler_trust._bundle.signing": ["assemble_bundle", "sign_bundle"],
    "compiler_trust._bundle.hashing": [
        "bundle_body",
        "bundle_body_hash",
        "normalise_body",
        "serialize_bundle",
    ],
    "compiler_trust._bundle.compiling": ["compile_input_from_bundle", "scenario_input"],
    "compiler_trust._bundle.verification": ["inspect_bundle", "verify_bundle"],
    "compiler_trust._receipts": [
        "CARRIES_CONTENT",
        "FORMAT_COMPACT",
        "Receipt",
        "ReceiptHeader",
        "ReceiptInvalid",
        "check_receipt",
        "compact_receipt",
        "content_sha256",
        "expand_receipt",
        "make_receipt",
        "parse_receipt",
        "receipt_header",
        "replay",
    ],
}
__getattr__ = lazy_surface(__name__, _HOMES)

__all__ = [
    "APPROVER_IS_PUBLISHER",
    "ApprovalStatement",
    "BundleInvalid",
    "CARRIES_CONTENT",
    "receipt_header",
    "expand_receipt",
    "compact_receipt",
    "ReceiptHeader",
    "Receipt",
    "FORMAT_COMPACT",
    "FORMAT",
    "FORMAT_2",
    "READ_FORMATS",
    "SUITE_FORMAT",
    "ScenarioSuite",
    "SuiteDigest",
    "SuiteInvalid",
    "KEY_MAY_NOT_SIGN_TYPE",
    "KEY_ROLES",
    "KEY_SET_FILE",
    "KEY_SET_FORMAT",
    "KEY_SET_WITHOUT_TYPES",
    "KeyLoadError",
    "MAX_CLOCK_SKEW",
    "Manifest",
    "Problem",
    "PublicationStatement",
    "ReceiptInvalid",
    "STATEMENT_OTHER_CONTRACT",
    "SignedStatement",
    "StatementInvalid",
    "TOO_FEW_APPROVALS",
    "TrustedKey",
    "VerifiedBundle",
    "assemble_bundle",
    "bundle_body",
    "bundle_body_hash",
    "canonical_bytes",
    "check_receipt",
    "compile_input_from_bundle",
    "content_sha256",
    "generate_key_pair",
    "inspect_bundle",
    "key_id",
    "key_set_json",
    "load_private_key",
    "load_private_key_file",
    "load_public_key",
    "load_public_keys",
    "make_receipt",
    "normalise_body",
    "parse_key_set",
    "parse_receipt",
    "parse_signed_statement",
    "private_key_pem",
    "public_key_pem",
    "replay",
    "scenario_input",
    "serialize_bundle",
    "serialize_suite",
    "split_suite",
    "suite_digest",
    "sha256_hex",
    "sign_as",
    "sign_bundle",
    "sign_statement",
    "signing_date_problem",
    "statement_bytes",
    "verify_bundle",
    "verify_statement",
    "verify_suite",
    "write_key_files",
]
