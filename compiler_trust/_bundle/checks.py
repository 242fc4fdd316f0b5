"""The rules a bundle keeps whatever the keys: four eyes in the signed manifest, one
signature per signatory with the key named for them, statements that are this bundle's,
and the roles the trusted key set grants.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from compiler_trust._bundle.document import Bundle, Manifest, Signature
from compiler_trust._bundle.reasons import (
    APPROVAL_WITH_EDITOR_KEY,
    APPROVAL_WITH_PUBLISHER_KEY,
    APPROVER_IS_EDITOR,
    APPROVER_IS_PUBLISHER,
    APPROVER_WITHOUT_SIGNATURE,
    APPROVERS_SHARE_A_KEY,
    KEY_MAY_NOT_SIGN,
    KEY_MAY_NOT_SIGN_TYPE,
    KEY_ROLE,
    KEY_SET_WITHOUT_TYPES,
    NO_PUBLISHER_SIGNATURE,
    PUBLISHER_IS_NOT_THE_SIGNER,
    SIGNED_WITH_ANOTHER_KEY,
    STATEMENT_MISMATCH,
    STATEMENT_OTHER_BUNDLE,
    STATEMENT_OTHER_CONTRACT,
    STATEMENT_OTHER_REPORT,
    BundleInvalid,
    Problem,
    _names,
)
from compiler_trust._keys import UNSCOPED_KEY_SET_FORMATS, TrustedKey, load_public_key
from compiler_trust._statements import ApprovalStatement, PublicationStatement


def _check_statement(index: int, sig: Signature, model: Bundle, contract_sha256: str) -> None:
    """A signature's statement is this bundle's: by the entry's signer with its key, of the
    kind its role makes, for the manifest's type and version, the bundle's contract, and the
    manifest's report (approval) or the bundle's sha256 (publication)."""
    statement, manifest = sig.statement, model.manifest
    assert statement is not None
    facts = {"index": index, "signer": sig.signer, "role": sig.role}
    kind = "publication" if sig.role == "publisher" else "approval"
    for what, ok in (
        (f"is by '{statement.signer}', not the entry's signer", statement.signer == sig.signer),
        (f"names key {statement.key_id}, not {sig.key_id}", statement.key_id == sig.key_id),
        (f"is a {statement.kind} statement, not an {kind}", statement.kind == kind),
        (
            f"is for {statement.decision_type} version {statement.version}, not "
            f"{manifest.decision_type} version {manifest.version}",
            (statement.decision_type, statement.version)
            == (manifest.decision_type, manifest.version),
        ),
    ):
        if not ok:
            raise BundleInvalid(STATEMENT_MISMATCH.format(**facts, what=what), Problem.STATEMENT)
    if statement.contract_sha256 != contract_sha256:
        raise BundleInvalid(
            STATEMENT_OTHER_CONTRACT.format(
                **facts, signed=statement.contract_sha256, actual=contract_sha256
            ),
            Problem.STATEMENT,
        )
    if isinstance(statement, ApprovalStatement) and statement.report_sha256 != (
        manifest.report_sha256
    ):
        raise BundleInvalid(
            STATEMENT_OTHER_REPORT.format(
                **facts, signed=statement.report_sha256, actual=manifest.report_sha256 or "none"
            ),
            Problem.STATEMENT,
        )
    if isinstance(statement, PublicationStatement) and statement.bundle_sha256 != model.sha256:
        raise BundleInvalid(
            STATEMENT_OTHER_BUNDLE.format(
                signer=sig.signer, signed=statement.bundle_sha256, actual=model.sha256
            ),
            Problem.STATEMENT,
        )


def _check_four_eyes(manifest: Manifest) -> None:
    """No approver is the publisher or an editor, and none is named with the publisher's,
    an editor's or another approver's key: all from the signed manifest, no key needed."""
    publisher = manifest.publisher
    editors = {e.person for e in manifest.editors}
    editor_keys = {e.key_id: e.person for e in manifest.editors if e.key_id is not None}
    for approver in manifest.approvers:
        person, kid = approver.person, approver.key_id
        if person == publisher.person:
            raise BundleInvalid(APPROVER_IS_PUBLISHER.format(person=person), Problem.FOUR_EYES)
        if person in editors:
            raise BundleInvalid(APPROVER_IS_EDITOR.format(person=person), Problem.FOUR_EYES)
        if kid == publisher.key_id:
            raise BundleInvalid(
                APPROVAL_WITH_PUBLISHER_KEY.format(
                    person=person, key_id=kid, publisher=publisher.person
                ),
                Problem.FOUR_EYES,
            )
        if kid in editor_keys:
            raise BundleInvalid(
                APPROVAL_WITH_EDITOR_KEY.format(person=person, key_id=kid, editor=editor_keys[kid]),
                Problem.FOUR_EYES,
            )
    by_key: dict[str, list[str]] = defaultdict(list)
    for approver in manifest.approvers:
        by_key[approver.key_id].append(approver.person)
    for kid, people in sorted(by_key.items()):
        if len(people) > 1:
            raise BundleInvalid(
                APPROVERS_SHARE_A_KEY.format(people=_names(people), key_id=kid),
                Problem.FOUR_EYES,
            )


def _check_key_roles(model: Bundle, trusted: Mapping[str, TrustedKey]) -> None:
    """The key set lets each signature's key sign as it does, for the manifest's decision
    type: the role (`publish` / `approve`) and, within it, the type. A key whose types the
    key set does not say (format 1) is refused rather than read as allowed for every type."""
    decision_type = model.manifest.decision_type
    for index, sig in enumerate(model.signatures):
        key = trusted[sig.key_id]
        needed = KEY_ROLE[sig.role]
        facts = {
            "index": index,
            "signer": sig.signer,
            "role": sig.role,
            "key_id": sig.key_id,
            "action": needed,
        }
        if needed not in key.roles:
            roles = ", ".join(sorted(key.roles)) or "none"
            raise BundleInvalid(KEY_MAY_NOT_SIGN.format(**facts, roles=roles), Problem.NOT_ALLOWED)
        types = key.types_for(needed)
        if types is None:
            unscoped = ", ".join(repr(f) for f in UNSCOPED_KEY_SET_FORMATS)
            raise BundleInvalid(
                KEY_SET_WITHOUT_TYPES.format(**facts, unscoped=unscoped), Problem.NOT_ALLOWED
            )
        if decision_type not in types:
            raise BundleInvalid(
                KEY_MAY_NOT_SIGN_TYPE.format(
                    **facts,
                    decision_type=decision_type,
                    types=", ".join(f"'{t}'" for t in sorted(types)) or "no type",
                ),
                Problem.NOT_ALLOWED,
            )


def _check_signature_set(model: Bundle) -> None:
    manifest, signatures = model.manifest, model.signatures
    publishers = [s for s in signatures if s.role == "publisher"]
    if not publishers:
        raise BundleInvalid(NO_PUBLISHER_SIGNATURE, Problem.SIGNATURES)
    if len(publishers) > 1:
        names = _names(sorted(s.signer for s in publishers))
        raise BundleInvalid(
            f"the bundle has {len(publishers)} publisher signatures ({names}); "
            "exactly one is required",
            Problem.SIGNATURES,
        )
    if publishers[0].signer != manifest.publisher.person:
        raise BundleInvalid(
            PUBLISHER_IS_NOT_THE_SIGNER.format(
                signer=_names([publishers[0].signer]), publisher=manifest.publisher.person
            ),
            Problem.SIGNATURES,
        )
    approvals = Counter(s.signer for s in signatures if s.role == "approver")
    for name, count in sorted(approvals.items()):
        if count > 1:
            raise BundleInvalid(f"'{name}' signed as approver {count} times", Problem.SIGNATURES)
        if name not in manifest.approver_names:
            raise BundleInvalid(
                f"an approver signature by '{name}', who is not among the manifest's "
                f"approvers ({_names(manifest.approver_names)})",
                Problem.SIGNATURES,
            )
    for name in manifest.approver_names:
        if name not in approvals:
            raise BundleInvalid(APPROVER_WITHOUT_SIGNATURE.format(person=name), Problem.SIGNATURES)
    named = {("publisher", manifest.publisher.person): manifest.publisher.key_id} | {
        ("approver", a.person): a.key_id for a in manifest.approvers
    }
    for sig in signatures:
        if sig.key_id != named[sig.role, sig.signer]:
            raise BundleInvalid(
                SIGNED_WITH_ANOTHER_KEY.format(
                    role=sig.role,
                    signer=sig.signer,
                    key_id=sig.key_id,
                    named=named[sig.role, sig.signer],
                ),
                Problem.SIGNATURES,
            )
    # With those keys and four eyes (approval keys distinct, none the publisher's), no key
    # signs for two people.


def _trusted_key(kid: str, key: TrustedKey | Ed25519PublicKey | bytes | str) -> TrustedKey:
    if isinstance(key, TrustedKey):
        return key
    if isinstance(key, Ed25519PublicKey):
        return TrustedKey(key)
    if isinstance(key, bytes | str):
        return TrustedKey(load_public_key(key))
    raise TypeError(f"public key {kid}: expected a TrustedKey, not {type(key).__name__}")
