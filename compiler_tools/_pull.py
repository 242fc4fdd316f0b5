"""Pulling a contract bundle: `evidence-compiler pull URL --token-file F --public-key KEYS
--out DIR` and the `BundleStore`'s timer.

Fetches the latest bundle of one decision type, verifies it against the pinned key set, and
replaces the local copy only when it verifies and moves forward. docs/distribution.md
describes every rule; in short:

* The local bundle is verified before its ETag is trusted. A local copy that no longer
  verifies (damaged, edited, or signed by a key since revoked) is fetched again without
  `If-None-Match`, so a `304` cannot keep a file every reader refuses.
* A small state file beside the bundle (`bundle.json.state`) remembers the bundle in place
  and the highest version accepted. A served bundle with a lower version is a rollback and is
  refused, and so is one whose `parent_sha256` chain does not lead back to the bundle in place
  (a fork), unless `--allow-downgrade VERSION` names exactly that version. Versions skipped
  between two pulls are fetched from the workbench's `…/versions/{n}/bundle` to walk the chain.
* Files are written atomically (a temporary file in `DIR`, fsynced, renamed over the old
  one, the directory fsynced) with the mode `--mode` (default 0644, readable by a service
  running as another user). The ETag is stored only beside a bundle that verified.
* Anything else (a network error, an HTTP error status, a body that does not verify, another
  decision type, a rollback or a fork): the previous bundle stays as it was, the reason goes
  to stderr, exit 1. Unusable arguments exit 2 before any request is made.

This and `compiler_tools._serve` are the only modules of the compiler that open a network
connection; the passes never import them. Standard library only (`urllib`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from compiler_tools._pull_io import (
    TIMEOUT_SECONDS,
    HttpStatus,
    PullFailed,
    PullUsage,
    Response,
    check_url,
    http_get,
    parse_mode,
    read_etag,
    read_or_none,
    read_token,
    replace_file,
    store_etag,
)
from compiler_tools._pull_tests import tests_step
from compiler_trust._bundle.document import VerifiedBundle
from compiler_trust._bundle.reasons import BundleInvalid
from compiler_trust._bundle.verification import inspect_bundle, verify_bundle
from compiler_trust._key_files import load_public_keys
from compiler_trust._keys import KeyLoadError

BUNDLE_FILE = "bundle.json"
STATE_FILE = "bundle.json.state"
STATE_FORMAT = "evidence-compiler.pull-state/1"
DEFAULT_MODE = 0o644
MAX_CHAIN_STEPS = 64

EXIT_OK, EXIT_FAILED, EXIT_INVALID = 0, 1, 2

ROLLBACK = (
    "the served bundle is version {served}, lower than version {highest} already accepted "
    "here: an old bundle served again (a rollback) is refused; to go back on purpose, pull "
    "with --allow-downgrade {served}"
)
FORK = (
    "the served bundle (version {served}, sha256 {sha}) does not descend from the bundle in "
    "place (version {kept}, sha256 {kept_sha}): {why}; to replace it on purpose, pull with "
    "--allow-downgrade {served}"
)
UNORDERED_VERSION = "version {version!r} is not a whole number, so pull cannot order it"


@dataclass(frozen=True)
class PullState:
    """What this directory last accepted: the bundle in place and the highest version."""

    decision_type: str
    version: str
    sha256: str
    highest_version: str

    def to_json(self) -> bytes:
        return json.dumps({"format": STATE_FORMAT, **self.__dict__}, sort_keys=True).encode()


@dataclass(frozen=True)
class PullResult:
    """`outcome` is `unchanged`, `updated` or `repaired`; `bundle` is the one now in place;
    `detail` says why it is unchanged; `notes` are warnings (one per legacy signature)."""

    outcome: str
    bundle: VerifiedBundle
    detail: str = ""
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Source:
    """Where bundles come from: the URL of the latest one and the bearer token."""

    url: str
    token: str
    timeout: float = TIMEOUT_SECONDS

    def get(self, url: str, etag: str | None = None) -> Response:
        return http_get(url, self.token, etag, self.timeout)

    def version_url(self, version: int | str, what: str = "bundle") -> str | None:
        """The URL of one version's bundle (or, `what="tests"`, its test suite), in the
        workbench's layout (`…/types/{key}/bundle` -> `…/types/{key}/versions/{n}/bundle`),
        or None."""
        parts = urllib.parse.urlsplit(self.url)
        if not parts.path.endswith("/bundle"):
            return None
        path = f"{parts.path.removesuffix('/bundle')}/versions/{version}/{what}"
        return urllib.parse.urlunsplit(parts._replace(path=path, query=""))


def pull(
    url: str,
    *,
    token_file: str | Path,
    public_key: str | Path,
    out: str | Path,
    stdout: TextIO,
    stderr: TextIO,
    timeout: float = TIMEOUT_SECONDS,
    require_approvals: int = 1,
    mode: str | int = DEFAULT_MODE,
    allow_downgrade: str | None = None,
    with_tests: bool = False,
) -> int:
    """Run one pull and return the exit code, printing one line of outcome (and a warning
    per legacy signature). `require_approvals` is the policy `verify-bundle` applies too.
    `with_tests` also fetches the bundle's test suite (`compiler_tools._pull_tests`)."""
    directory = Path(out)
    try:
        check_url(url)
        file_mode = parse_mode(mode)
        source = Source(url, read_token(Path(token_file)), timeout)
        keys = load_public_keys(public_key)
    except (PullUsage, KeyLoadError) as exc:
        print(f"pull: {exc}", file=stderr)
        return EXIT_INVALID
    try:
        result = pull_bundle(
            source,
            keys=keys,
            directory=directory,
            mode=file_mode,
            allow_downgrade=allow_downgrade,
            require_approvals=require_approvals,
        )
    except PullUsage as exc:
        print(f"pull: {exc}", file=stderr)
        return EXIT_INVALID
    except PullFailed as exc:
        kept = (
            "kept the previous bundle"
            if (directory / BUNDLE_FILE).exists()
            else "no bundle stored yet"
        )
        print(f"pull failed: {exc}; {kept} ({directory / BUNDLE_FILE})", file=stderr)
        return EXIT_FAILED
    for note in result.notes:
        print(f"warning: {note}", file=stderr)
    manifest, bundle = result.bundle.manifest, result.bundle
    if result.outcome == "unchanged":
        print(
            f"unchanged: {result.detail} ({manifest.decision_type} version {manifest.version})",
            file=stdout,
        )
    else:
        print(
            f"{result.outcome}: {manifest.decision_type} version {manifest.version}, "
            f"sha256 {bundle.sha256} -> {directory / BUNDLE_FILE}",
            file=stdout,
        )
    return tests_step(source, result.outcome, bundle, directory, file_mode, with_tests,
                      stdout, stderr)  # fmt: skip


def pull_bundle(
    source: Source,
    *,
    keys: Mapping[str, Any],
    directory: Path,
    mode: int = DEFAULT_MODE,
    allow_downgrade: str | None = None,
    require_approvals: int = 1,
) -> PullResult:
    """One pull into `directory`; raises `PullFailed` (nothing changed) or `PullUsage`."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PullUsage(f"cannot create {directory}: {exc.strerror}") from None

    def verified(body: bytes) -> VerifiedBundle:
        # The tools may read the clock: no signature may be dated in the future.
        now = dt.datetime.now(dt.UTC)
        return verify_bundle(body, keys, require_approvals=require_approvals, now=now)

    notes: list[str] = []
    previous = read_or_none(directory / BUNDLE_FILE)
    local: VerifiedBundle | None = None
    if previous is not None:
        try:
            local = verified(previous)
        except BundleInvalid as exc:
            notes.append(f"the local bundle does not verify ({exc}); fetching it again")
    state = _read_state(directory, local)
    # A local copy that fails verification must not be kept alive by its ETag's 304.
    etag = read_etag(directory) if local is not None else None
    response = source.get(source.url, etag)
    if response.status == 304 and local is not None:
        detail = f"{source.url} answered 304 Not Modified"
        return PullResult("unchanged", local, detail, local.warnings)
    if local is not None and previous == response.body:
        store_etag(directory, response.etag, mode)
        return PullResult("unchanged", local, "the served bundle is the local one", local.warnings)
    try:
        bundle = verified(response.body)
    except BundleInvalid as exc:
        raise PullFailed(f"the served bundle does not verify: {exc}") from None
    _check_decision_type(bundle, state, previous)
    if allow_downgrade is None or allow_downgrade != bundle.manifest.version:
        _check_moves_forward(bundle, state, source, verified)
    highest = bundle.manifest.version
    if state is not None and allow_downgrade is None:
        highest = _higher(highest, state.highest_version)
    replace_file(directory / BUNDLE_FILE, response.body, mode)
    manifest = bundle.manifest
    new_state = PullState(manifest.decision_type, manifest.version, bundle.sha256, highest)
    replace_file(directory / STATE_FILE, new_state.to_json() + b"\n", mode)
    store_etag(directory, response.etag, mode)
    outcome = "repaired" if state is not None and state.sha256 == bundle.sha256 else "updated"
    return PullResult(outcome, bundle, notes=tuple(notes) + bundle.warnings)


# --------------------------------------------------------------------------- the checks


def _check_decision_type(
    bundle: VerifiedBundle, state: PullState | None, previous: bytes | None
) -> None:
    kept_type = state.decision_type if state is not None else None
    if kept_type is None and previous is not None:
        with contextlib.suppress(BundleInvalid):  # a damaged copy names no type
            kept_type = inspect_bundle(previous).manifest.decision_type
    served = bundle.manifest.decision_type
    if kept_type is not None and kept_type != served:
        raise PullFailed(f"the served bundle is for '{served}', the local one for '{kept_type}'")


def _check_moves_forward(
    bundle: VerifiedBundle,
    state: PullState | None,
    source: Source,
    verified: Callable[[bytes], VerifiedBundle],
) -> None:
    """Refuse a rollback (a version below the highest accepted) and a fork (a chain of
    `parent_sha256` that does not reach the bundle in place)."""
    if state is None or bundle.sha256 == state.sha256:
        return  # a first pull trusts what verifies; the same bundle again is a repair
    served = _number(bundle.manifest.version)
    if served < _number(state.highest_version):
        raise PullFailed(ROLLBACK.format(served=served, highest=state.highest_version))
    why: str | None
    if served == _number(state.version):
        why = "a published version never changes, and this one has other content"
    else:
        why = _chain_break(bundle, state, source, verified)
    if why is not None:
        raise PullFailed(
            FORK.format(served=served, sha=bundle.sha256, kept=state.version,
                        kept_sha=state.sha256, why=why)
        )  # fmt: skip


def _chain_break(
    bundle: VerifiedBundle,
    state: PullState,
    source: Source,
    verified: Callable[[bytes], VerifiedBundle],
) -> str | None:
    """Why the chain from `bundle` does not reach the bundle in place, or None when it does.
    Versions published between the two are fetched (newest first) to follow the chain."""
    current, kept = bundle, _number(state.version)
    for _ in range(MAX_CHAIN_STEPS):
        parent = current.manifest.parent_sha256
        if parent == state.sha256:
            return None
        if parent is None:
            return f"version {current.manifest.version} names no parent"
        below = _number(current.manifest.version) - 1
        if below <= kept:
            return (
                f"version {current.manifest.version}'s parent is {parent}, not the bundle in place"
            )
        found = _find_parent(parent, range(below, kept, -1), source, verified)
        if found is None:
            return f"no version between {kept} and {current.manifest.version} has sha256 {parent}"
        current = found
    return f"the chain is longer than {MAX_CHAIN_STEPS} versions"


def _find_parent(
    sha256: str,
    versions: range,
    source: Source,
    verified: Callable[[bytes], VerifiedBundle],
) -> VerifiedBundle | None:
    for version in versions:
        url = source.version_url(version)
        if url is None:
            raise PullFailed(
                f"the versions between cannot be fetched to follow the chain: {source.url} "
                "does not end in /bundle (the workbench's layout)"
            )
        try:
            response = source.get(url)
        except HttpStatus as exc:
            if exc.status == 404:
                continue  # a version never published is not part of any chain
            raise
        try:
            candidate = verified(response.body)
        except BundleInvalid as exc:
            raise PullFailed(f"version {version}'s bundle does not verify: {exc}") from None
        if candidate.sha256 == sha256:
            return candidate
    return None


def _higher(version: str, other: str) -> str:
    """The higher of two versions; `version` when they cannot be ordered."""
    if version.isdigit() and other.isdigit():
        return max(version, other, key=int)
    return version


def _number(version: str) -> int:
    if not version.isdigit():
        raise PullFailed(UNORDERED_VERSION.format(version=version))
    return int(version)


# --------------------------------------------------------------------------- files


def _read_state(directory: Path, local: VerifiedBundle | None) -> PullState | None:
    """The state file, or one made from the verified local bundle (a directory written
    before the state file existed); an unreadable state file counts as absent."""
    try:
        data = json.loads((directory / STATE_FILE).read_bytes())
        if data.pop("format") != STATE_FORMAT:
            raise ValueError(data)
        state = PullState(**data)
        _number(state.highest_version)
    except (OSError, ValueError, TypeError, KeyError, PullFailed):
        state = None
    if local is None:
        return state
    manifest = local.manifest
    if state is None or state.sha256 != local.sha256:
        highest = manifest.version
        if state is not None:
            highest = _higher(highest, state.highest_version)
        return PullState(manifest.decision_type, manifest.version, local.sha256, highest)
    return state
