"""`evidence-compiler pull URL --token-file F --public-key KEYS --out DIR`.

Fetches the latest bundle of one decision type, verifies it against the pinned key set, and
replaces the local copy only when it verifies. Meant for a timer (docs/distribution.md):

* The request carries the bearer token from `--token-file` (never forwarded on a redirect)
  and, when a local bundle exists, `If-None-Match` with the ETag stored beside it.
* `304 Not Modified`, or a body byte-identical to the local bundle: nothing is rewritten,
  exit 0.
* `200` with a bundle that verifies (`compiler_trust.verify_bundle`: hash, signatures, key
  roles, four eyes) and is of the same decision type as the local one: written to a
  temporary file in `DIR`, flushed, and moved over `DIR/bundle.json` with `os.replace`, so a
  reader sees the old bundle or the new one, never a partial file; its ETag goes to
  `DIR/bundle.json.etag`. Exit 0.
* Anything else (a network error, an HTTP error status, a body that does not verify, another
  decision type): the previous bundle stays as it was, the reason goes to stderr, exit 1.
  Unusable arguments (an unreadable token file or key set, a plain-http URL to another
  host) exit 2 before any request is made.

This is the only module of the compiler that opens a network connection; the passes never
import it. Standard library only (`urllib`).
"""

from __future__ import annotations

import datetime as dt
import http.client
import ipaddress
import os
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from compiler_trust._bundle.document import VerifiedBundle
from compiler_trust._bundle.reasons import BundleInvalid
from compiler_trust._bundle.verification import inspect_bundle, verify_bundle
from compiler_trust._key_files import load_public_keys
from compiler_trust._keys import KeyLoadError

BUNDLE_FILE = "bundle.json"
ETAG_FILE = "bundle.json.etag"
MAX_BUNDLE_BYTES = 64 * 1024 * 1024
TIMEOUT_SECONDS = 30.0
USER_AGENT = "evidence-compiler-pull"

EXIT_OK, EXIT_FAILED, EXIT_INVALID = 0, 1, 2


class PullFailed(Exception):
    """The pull did not produce a new verified bundle; the local copy is untouched."""


class PullUsage(Exception):
    """The arguments cannot be used (exit 2): nothing was requested."""


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes
    etag: str | None


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
) -> int:
    """Run one pull and return the exit code, printing one line of outcome (and a warning
    per legacy signature). `require_approvals` is the policy `verify-bundle` applies too."""
    directory = Path(out)
    current = directory / BUNDLE_FILE
    try:
        _check_url(url)
        token = _read_token(Path(token_file))
        keys = load_public_keys(public_key)
        directory.mkdir(parents=True, exist_ok=True)
    except (PullUsage, KeyLoadError) as exc:
        print(f"pull: {exc}", file=stderr)
        return EXIT_INVALID
    except OSError as exc:
        print(f"pull: cannot create {directory}: {exc.strerror}", file=stderr)
        return EXIT_INVALID
    previous = _read_or_none(current)
    etag = _read_etag(directory) if previous is not None else None
    try:
        response = _get(url, token, etag, timeout)
        if response.status == 304:
            print(f"unchanged: {url} answered 304 Not Modified", file=stdout)
            return EXIT_OK
        if previous == response.body:
            _store_etag(directory, response.etag)
            print("unchanged: the served bundle is the local one", file=stdout)
            return EXIT_OK
        bundle = _verified(response.body, keys, previous, require_approvals)
        _replace(current, response.body)
        _store_etag(directory, response.etag)
    except PullFailed as exc:
        kept = "kept the previous bundle" if previous is not None else "no bundle stored yet"
        print(f"pull failed: {exc}; {kept} ({current})", file=stderr)
        return EXIT_FAILED
    for warning in bundle.warnings:
        print(f"warning: {warning}", file=stderr)
    manifest = bundle.manifest
    print(
        f"updated: {manifest.decision_type} version {manifest.version}, sha256 {bundle.sha256}"
        f" -> {current}",
        file=stdout,
    )
    return EXIT_OK


# --------------------------------------------------------------------------- steps


def _check_url(url: str) -> None:
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise PullUsage(f"{url!r} is not an http(s) URL")
    if parts.scheme == "http" and not _is_loopback(parts.hostname):
        raise PullUsage(
            f"{url!r}: the bearer token would travel in clear text; use https "
            "(plain http is accepted for a loopback address only)"
        )


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _read_token(path: Path) -> str:
    try:
        token = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or "not UTF-8 text"
        raise PullUsage(f"--token-file {path}: cannot be read ({reason})") from None
    if not token or any(c.isspace() for c in token):
        raise PullUsage(f"--token-file {path}: expected one token on one line")
    return token


def _read_or_none(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _read_etag(directory: Path) -> str | None:
    try:
        return (directory / ETAG_FILE).read_text(encoding="ascii").strip() or None
    except (OSError, UnicodeDecodeError):
        return None


def _get(url: str, token: str, etag: str | None, timeout: float) -> Response:
    request = urllib.request.Request(url, method="GET")
    request.add_header("Accept", "application/json")
    request.add_header("User-Agent", USER_AGENT)
    # Unredirected: a redirect to another host does not receive the token.
    request.add_unredirected_header("Authorization", f"Bearer {token}")
    if etag:
        request.add_header("If-None-Match", etag)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:  # noqa: S310
            body = answer.read(MAX_BUNDLE_BYTES + 1)
            status, tag = answer.status, answer.headers.get("ETag")
    except urllib.error.HTTPError as exc:
        if exc.code == 304:
            return Response(304, b"", etag)
        raise PullFailed(f"{url} answered {exc.code} {exc.reason}") from None
    except urllib.error.URLError as exc:
        raise PullFailed(f"cannot reach {url}: {exc.reason}") from None
    except (OSError, http.client.HTTPException) as exc:
        raise PullFailed(f"cannot reach {url}: {exc or type(exc).__name__}") from None
    if status != 200:
        raise PullFailed(f"{url} answered {status}, not 200 with a bundle")
    if len(body) > MAX_BUNDLE_BYTES:
        raise PullFailed(f"the served bundle is larger than {MAX_BUNDLE_BYTES} bytes")
    return Response(status, body, tag)


def _verified(
    body: bytes, keys: dict, previous: bytes | None, require_approvals: int = 1
) -> VerifiedBundle:
    try:
        # The command line may read the clock: no signature may be dated in the future.
        bundle = verify_bundle(
            body, keys, require_approvals=require_approvals, now=dt.datetime.now(dt.UTC)
        )
    except BundleInvalid as exc:
        raise PullFailed(f"the served bundle does not verify: {exc}") from None
    if previous is not None:
        try:
            kept_type = inspect_bundle(previous).manifest.decision_type
        except BundleInvalid:
            kept_type = None  # a damaged local copy is replaced by a verified one
        if kept_type is not None and kept_type != bundle.manifest.decision_type:
            raise PullFailed(
                f"the served bundle is for '{bundle.manifest.decision_type}', the local one "
                f"for '{kept_type}'"
            )
    return bundle


def _replace(path: Path, data: bytes) -> None:
    """Write `data` to `path` atomically: a temporary file in the same directory, flushed to
    disk, then renamed over `path`."""
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except OSError as exc:
        Path(temporary).unlink(missing_ok=True)
        raise PullFailed(f"cannot write {path}: {exc.strerror}") from None


def _store_etag(directory: Path, etag: str | None) -> None:
    path = directory / ETAG_FILE
    if etag:
        _replace(path, etag.encode("ascii", "replace") + b"\n")
    else:
        path.unlink(missing_ok=True)
