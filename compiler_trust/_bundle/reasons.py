"""The bundle format's names and every reason a bundle is refused: `Problem`, `BundleInvalid`,
the `str.format` reason constants tests assert on, and the helpers that word a reason.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from enum import StrEnum
from typing import Any

from pydantic import ValidationError

FORMAT = "evidence-workbench.bundle/3"
"""The format this compiler writes: the scenarios travel in a separate test suite, which the
signed manifest names by its sha256 (`SUITE_FORMAT`)."""
FORMAT_2 = "evidence-workbench.bundle/2"
"""The format before it, which carries its scenarios itself: still read and verified (a
published bundle never changes), still signed by `sign_bundle` when a body declares it."""
READ_FORMATS = (FORMAT_2, FORMAT)
SUITE_FORMAT = "evidence-workbench.suite/1"
"""A bundle's test suite: its scenarios with their expectations, hash-linked from the bundle."""
OUTDATED_FORMATS = ("evidence-workbench.bundle/1",)
"""Formats this compiler knows but refuses: their manifest names the approvers without their
keys and does not name the editors, so four eyes cannot be checked."""
SIGNATURE_ALGORITHM = "ed25519"
UNSIGNED_MEMBERS = ("sha256", "signatures")
"""The two top-level members the hash does not cover."""

KEY_ROLE = {"publisher": "publish", "approver": "approve"}
"""The trusted key set's role a signature of each kind needs."""

# Reasons tests assert on (`str.format`ted). The four-eyes ones come from the signed manifest
# alone; the roles from the trusted key set.
OUTDATED_FORMAT = (
    "outdated bundle: it declares format {found!r}, whose manifest names its approvers "
    "without their keys and not its editors at all, so four eyes cannot be checked; this "
    "compiler reads {expected}: publish the version again"
)
APPROVER_IS_PUBLISHER = (
    "four eyes: approver '{person}' is also the bundle's publisher; someone other than the "
    "publisher must approve"
)
APPROVER_IS_EDITOR = (
    "four eyes: approver '{person}' created or edited this version; nobody approves their own work"
)
APPROVAL_WITH_PUBLISHER_KEY = (
    "four eyes: approver '{person}' is named with key {key_id}, the publisher '{publisher}''s "
    "key; each approval is made with the approver's own key"
)
APPROVAL_WITH_EDITOR_KEY = (
    "four eyes: approver '{person}' is named with key {key_id}, the key of editor "
    "'{editor}'; each approval is made with the approver's own key"
)
APPROVERS_SHARE_A_KEY = (
    "four eyes: approvers {people} are named with the same key {key_id}; each approves with "
    "their own key"
)
NO_PUBLISHER_SIGNATURE = "the bundle has no publisher signature"
PUBLISHER_IS_NOT_THE_SIGNER = (
    "the publisher signature is by {signer}, but the manifest names '{publisher}' as publisher"
)
APPROVER_WITHOUT_SIGNATURE = (
    "approver '{person}' is listed in the manifest without a matching approver signature"
)
SIGNED_WITH_ANOTHER_KEY = (
    "the {role} signature by '{signer}' is made with key {key_id}, but the manifest names key "
    "{named} for them"
)
STATEMENT_OTHER_CONTRACT = (
    "statement for another contract: signatures[{index}] by '{signer}' ({role}) signs "
    "contract sha256 {signed}, but this bundle's contract hashes to {actual}"
)
STATEMENT_OTHER_REPORT = (
    "statement for another report: signatures[{index}] by '{signer}' approves impact report "
    "{signed}, but the manifest names report {actual}"
)
STATEMENT_OTHER_BUNDLE = (
    "statement for another bundle: the publication statement by '{signer}' signs bundle "
    "{signed}, but this bundle's sha256 is {actual}"
)
STATEMENT_MISMATCH = "signatures[{index}] by '{signer}' ({role}): its statement {what}"
REVOKED_KEY = (
    "revoked key: signatures[{index}] by '{signer}' ({role}, key {key_id}) is dated "
    "{signed_at}, at or after the key was revoked ({revoked_at}); signatures made before "
    "the revocation stay valid"
)
SUITE_ALTERED = (
    "the test suite was altered, or belongs to another bundle: it hashes to {actual}, but the "
    "signed manifest of {decision_type} version {version} names test suite {expected}"
)
SUITE_NEEDED = (
    "{decision_type} version {version} is an {format} bundle: its {count} scenario(s) travel in "
    "a separate test suite (sha256 {sha256}); pass it with --tests FILE (pull --with-tests "
    "stores it as tests.json; the workbench serves it at /api/v1/types/{decision_type}/versions/"
    "{version}/tests)"
)
NO_SUITE = "{decision_type} version {version} has no scenarios: its bundle names no test suite"
SUITE_NOT_NEEDED = (
    "{decision_type} version {version} is an {format} bundle, which carries its scenarios "
    "itself: it has no separate test suite"
)
BADLY_DATED = "badly dated: signatures[{index}] by '{signer}' ({role}, key {key_id}) is {problem}"
UNSTATED_SIGNATURE = (
    "signatures[{index}] by '{signer}' ({role}, key {key_id}) carries no signed statement, "
    "and only a legacy (workbench-held) key may sign that way"
)
LEGACY_SIGNATURE = (
    "legacy signature: signatures[{index}] by '{signer}' ({role}, key {key_id}) was made "
    "with a key the workbench held, so it proves only that the workbench recorded it"
)
TOO_FEW_APPROVALS = (
    "policy: the bundle carries {count} approval(s); this verifier requires {required} "
    "(--require-approvals)"
)
KEY_MAY_NOT_SIGN = (
    "not allowed: signatures[{index}] by '{signer}' ({role}, key {key_id}): the trusted key "
    "set says this key may not {action} (its roles: {roles})"
)
KEY_MAY_NOT_SIGN_TYPE = (
    "not allowed: signatures[{index}] by '{signer}' ({role}, key {key_id}): the trusted key "
    "set says this key may not {action} decision type '{decision_type}' (it may {action}: "
    "{types})"
)
KEY_SET_WITHOUT_TYPES = (
    "not allowed: signatures[{index}] by '{signer}' ({role}, key {key_id}): the trusted key "
    "set does not say which decision types this key may {action} (a key set of format "
    "{unscoped}, written before keys were scoped to types); export the key set again "
    "(python manage.py export_public_keys DIR, or GET /api/v1/types/{{key}}/keys)"
)


# --------------------------------------------------------------------------- errors


class Problem(StrEnum):
    """What kind of thing is wrong with a bundle (`BundleInvalid.problem`)."""

    MALFORMED = "malformed"  # not UTF-8, not JSON, duplicate keys, not representable in JCS
    FORMAT = "format"  # not an object, or an unsupported `format`
    ALTERED = "altered"  # sha256 does not match the contents
    NOT_CANONICAL = "not_canonical"  # contents intact, bytes differ from the canonical file form
    SCHEMA = "schema"  # fields missing, of the wrong type, or inconsistent
    UNKNOWN_KEY = "unknown_key"  # a signature by a key the verifier does not trust
    BAD_SIGNATURE = "bad_signature"  # a signature that does not sign this bundle's sha256
    WRONG_SIGNER = "wrong_signer"  # a trusted key used under another person's name
    SIGNATURES = "signatures"  # the set of signatures does not match the manifest
    OUTDATED = "outdated"  # an older format, without what four eyes needs
    FOUR_EYES = "four_eyes"  # an approver is the publisher or an editor, or uses their key
    NOT_ALLOWED = "not_allowed"  # the key set does not let the key publish / approve
    STATEMENT = "statement"  # a signed statement that is not this bundle's
    REVOKED = "revoked"  # a signature dated at or after its key's revocation
    DATED = "dated"  # a signature dated before its key existed, or in the future
    POLICY = "policy"  # fewer approvals than the verifier requires


class BundleInvalid(ValueError):
    """A bundle that must not be used. `reason` is one human-readable explanation (several
    lines for schema errors, each with its location); `problem` classifies it; `errors` lists
    `{"loc", "msg"}` for schema errors."""

    def __init__(
        self,
        reason: str,
        problem: Problem = Problem.SCHEMA,
        errors: list[dict[str, Any]] | None = None,
    ):
        reason = _bounded(reason)
        self.reason = reason
        self.problem = Problem(problem)
        self.errors = [{**e, "msg": _bounded(e["msg"])} for e in errors or []]
        super().__init__(reason)

    def __str__(self) -> str:
        return self.reason


# --------------------------------------------------------------------------- helpers


LONGEST_WORD = 200
"""A reason shows a run of more characters than this without a space (a hostile name, format
or sha256 of megabytes) by its start and its length; hex digests, key ids and signatures are
far shorter."""
LONGEST_LINE = 1_000
_WORD = re.compile(rf"\S{{{LONGEST_WORD + 1},}}")


def _bounded(text: str) -> str:
    """`text` with every over-long word and line cut short and its length said instead, so
    that refusing a huge value never echoes it whole (to a terminal, a log or a page)."""
    text = _WORD.sub(lambda m: f"{m[0][:40]}…[{len(m[0])} characters]", text)
    return "\n".join(
        line if len(line) <= LONGEST_LINE else f"{line[:LONGEST_LINE]}…[{len(line)} characters]"
        for line in text.split("\n")
    )


def _schema_error(exc: ValidationError, headline: str) -> BundleInvalid:
    errors = [{"loc": list(e["loc"]), "msg": e["msg"]} for e in exc.errors()]
    lines = [f"  {_location(e['loc'])}: {e['msg']}" for e in errors]
    return BundleInvalid(headline + ":\n" + "\n".join(lines), Problem.SCHEMA, errors)


def _location(loc: Iterable[Any]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(bundle)"


def _names(names: Iterable[str]) -> str:
    return ", ".join(f"'{n}'" for n in names) or "none"


def _json_type(value: Any) -> str:
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "null" if value is None else type(value).__name__


class SuiteInvalid(BundleInvalid):
    """A test suite that is not the one its bundle names, or not a test suite at all."""


def read_formats() -> str:
    """The formats this compiler reads, for a refusal: `'…/2', '…/3'`."""
    return _names(READ_FORMATS)
