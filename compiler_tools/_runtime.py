"""The runtime API: a service keeps a verified bundle current (`BundleStore`) and compiles
requests against it (`decide`), in process, without shelling out.

    store = BundleStore("/var/lib/evidence/credit", public_key="/etc/evidence/keys.json")
    decision = decide(store, request, candidates, receipt=True)
    decision.output.packet_ids, decision.receipt

The store loads `DIR/bundle.json`, verifies it, and on a timer (a daemon thread) pulls a newer
one when it has a URL and token (`compiler_tools._pull`: rollback and fork refused) and
reloads the file when `pull` replaced it. Whatever fails, `current()` keeps answering with the
last bundle that verified.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compiler._input import CompileInput
from compiler._output import CompileOutput
from compiler._pipeline import compile_input
from compiler_tools._pull import BUNDLE_FILE, DEFAULT_MODE, Source, pull_bundle
from compiler_tools._pull_io import PullFailed, PullUsage, check_url, read_token
from compiler_trust._bundle.compiling import compile_input_from_bundle
from compiler_trust._bundle.document import VerifiedBundle
from compiler_trust._bundle.reasons import BundleInvalid
from compiler_trust._bundle.verification import verify_bundle
from compiler_trust._key_files import load_public_keys
from compiler_trust._receipts import make_receipt

DEFAULT_INTERVAL = 60.0
NO_BUNDLE = "no bundle that verifies has been loaded from {path} yet{reason}"


class NoBundle(RuntimeError):
    """The store has never held a verified bundle (a first load or pull that failed)."""


@dataclass(frozen=True)
class Decision:
    """One compile against a verified bundle: its output, its receipt when asked for, and the
    bundle it was decided against."""

    output: CompileOutput
    bundle: VerifiedBundle
    receipt: Any = None
    """A `compiler_trust` receipt (`.to_json()`), or None when not asked for."""


class BundleStore:
    """The last good bundle of one directory, kept current on a timer.

    `public_key` is a key file, a key directory or a loaded key set. With `url` and `token`
    (or `token_file`), every `interval` seconds it pulls into `directory` first; in every case
    it then reloads `directory/bundle.json` when its size, mtime or inode changed. A reload or
    pull that fails leaves `current()` as it was and sets `last_error`. `start=False` skips
    the thread: call `refresh()` yourself."""

    def __init__(
        self,
        directory: str | Path,
        *,
        public_key: str | Path | Mapping[str, Any],
        url: str | None = None,
        token: str | None = None,
        token_file: str | Path | None = None,
        interval: float = DEFAULT_INTERVAL,
        mode: int = DEFAULT_MODE,
        require_approvals: int = 1,
        start: bool = True,
    ) -> None:
        self.directory = Path(directory)
        self.interval = interval
        self.last_error: str | None = None
        self.loaded_at: dt.datetime | None = None
        self._keys = public_key if isinstance(public_key, Mapping) else load_public_keys(public_key)
        self._source = _source(url, token, token_file)
        self._mode, self._require_approvals = mode, require_approvals
        self._bundle: VerifiedBundle | None = None
        self._digest: str | None = None  # the sha256 of the loaded file's bytes
        self._seen: tuple[int, int, int] | None = None
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None
        self.refresh()
        if start:
            self._thread = threading.Thread(
                target=self._run, name=f"bundle-store {self.directory}", daemon=True
            )
            self._thread.start()

    def current(self) -> VerifiedBundle:
        """The bundle to decide with; `NoBundle` if none has ever verified."""
        bundle = self._bundle
        if bundle is None:
            reason = f" ({self.last_error})" if self.last_error else ""
            path = self.directory / BUNDLE_FILE
            raise NoBundle(NO_BUNDLE.format(path=path, reason=reason))
        return bundle

    def refresh(self) -> bool:
        """One pull (with a URL) and one look at the file; True when the bundle changed."""
        with self._lock:
            before = self._bundle
            error = self._pull() if self._source is not None else None
            error = self._reload() or error
            self.last_error = error
            return self._bundle is not before

    def stop(self, timeout: float | None = 5.0) -> None:
        """End the timer thread (the bundle stays readable)."""
        self._stopped.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def __enter__(self) -> BundleStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self) -> None:
        while not self._stopped.wait(self.interval):
            self.refresh()

    def _pull(self) -> str | None:
        assert self._source is not None
        try:
            pull_bundle(
                self._source,
                keys=self._keys,
                directory=self.directory,
                mode=self._mode,
                require_approvals=self._require_approvals,
            )
        except (PullFailed, PullUsage) as exc:
            return f"pull failed: {exc}"
        return None

    def _reload(self) -> str | None:
        path = self.directory / BUNDLE_FILE
        try:
            info = path.stat()
        except OSError as exc:
            return f"cannot read {path}: {exc.strerror}"
        seen = (info.st_size, info.st_mtime_ns, info.st_ino)
        if seen == self._seen:
            return None
        try:
            data = path.read_bytes()
        except OSError as exc:
            return f"cannot read {path}: {exc.strerror}"
        self._seen = seen
        digest = hashlib.sha256(data).hexdigest()
        if digest == self._digest:
            return None  # touched, or rewritten with the same bytes
        try:
            bundle = verify_bundle(
                data,
                self._keys,
                require_approvals=self._require_approvals,
                now=dt.datetime.now(dt.UTC),
            )
        except BundleInvalid as exc:
            return f"{path} does not verify ({exc}); kept the bundle loaded before"
        kept = self._bundle
        if kept is not None and kept.manifest.decision_type != bundle.manifest.decision_type:
            return (
                f"{path} is for '{bundle.manifest.decision_type}', the loaded bundle for "
                f"'{kept.manifest.decision_type}'; kept the bundle loaded before"
            )
        self._bundle, self._digest = bundle, digest
        self.loaded_at = dt.datetime.now(dt.UTC)
        return None


def decide(
    store_or_bundle: BundleStore | VerifiedBundle,
    request: Mapping[str, Any],
    candidates: Sequence[Mapping[str, Any]],
    *,
    receipt: bool = False,
    directory: Mapping[str, Any] | None = None,
    decision_id: str | None = None,
) -> Decision:
    """Compile `request` and `candidates` (and the entity `directory`, if any) against the
    store's current bundle or the given verified bundle. Raises `InvalidInput` listing every
    problem of the input; a refusal is an output (`output.refusal`), not an exception. With
    `receipt=True` the decision's receipt (`compiler_trust.make_receipt`) comes along."""
    bundle = (
        store_or_bundle.current() if isinstance(store_or_bundle, BundleStore) else store_or_bundle
    )
    compiled_input = decision_input(bundle, request, candidates, directory=directory)
    output = compile_input(compiled_input)
    made = (
        make_receipt(compiled_input, output, bundle_sha256=bundle.sha256, decision_id=decision_id)
        if receipt
        else None
    )
    return Decision(output=output, bundle=bundle, receipt=made)


def decision_input(
    bundle: VerifiedBundle,
    request: Mapping[str, Any],
    candidates: Sequence[Mapping[str, Any]],
    *,
    directory: Mapping[str, Any] | None = None,
) -> CompileInput:
    """The compile input of one decision: the bundle's contract with the caller's request,
    candidates and directory. Raises `InvalidInput` listing every problem, each located in the
    compile input (`candidates[2].tokens`)."""
    document: dict[str, Any] = {"request": request, "candidates": list(candidates)}
    if directory is not None:
        document["directory"] = directory
    return compile_input_from_bundle(bundle, document)


def bundle_age(bundle: VerifiedBundle, now: dt.datetime) -> float:
    """Seconds since the bundle was published: a pull that keeps failing (or a server that
    withholds new versions) shows as a growing age."""
    published = dt.datetime.fromisoformat(bundle.manifest.published_at)
    return (now - published).total_seconds()


def _source(url: str | None, token: str | None, token_file: str | Path | None) -> Source | None:
    if url is None:
        if token is not None or token_file is not None:
            raise PullUsage("a token without a url: give the bundle's url too")
        return None
    check_url(url)
    if token is None:
        if token_file is None:
            raise PullUsage("a url needs a token or a token_file")
        token = read_token(Path(token_file))
    return Source(url, token)
