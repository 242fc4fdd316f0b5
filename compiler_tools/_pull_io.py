"""What `pull` does at its edges: reading its arguments, the files in the bundle directory
(atomic replacement with a chosen mode, the ETag beside the bundle) and the one HTTP GET,
with the errors each can raise. `compiler_tools._pull` decides; this reads and writes."""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import os
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ETAG_FILE = "bundle.json.etag"


MAX_BUNDLE_BYTES = 64 * 1024 * 1024


TIMEOUT_SECONDS = 30.0


USER_AGENT = "evidence-compiler-pull"


class PullFailed(Exception):
    """The pull did not produce a new verified bundle; the local copy is untouched."""


class HttpStatus(PullFailed):
    """The server answered an error status (`status`)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class PullUsage(Exception):
    """The arguments cannot be used (exit 2): nothing was requested."""


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes
    etag: str | None


def check_url(url: str) -> None:
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise PullUsage(f"{url!r} is not an http(s) URL")
    if parts.scheme == "http" and not _is_loopback(parts.hostname):
        raise PullUsage(
            f"{url!r}: the bearer token would travel in clear text; use https "
            "(plain http is accepted for a loopback address only)"
        )


def parse_mode(mode: str | int) -> int:
    """An octal file mode such as `0644` or `640` (permission bits only)."""
    if isinstance(mode, int):
        value = mode
    else:
        try:
            value = int(mode, 8)
        except ValueError:
            value = -1
    if not 0 <= value <= 0o777:
        raise PullUsage(f"--mode {mode!r}: expected octal permission bits such as 0644")
    return value


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def read_token(path: Path) -> str:
    try:
        token = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or "not UTF-8 text"
        raise PullUsage(f"--token-file {path}: cannot be read ({reason})") from None
    if not token or any(c.isspace() for c in token):
        raise PullUsage(f"--token-file {path}: expected one token on one line")
    return token


def read_or_none(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def read_etag(directory: Path) -> str | None:
    try:
        return (directory / ETAG_FILE).read_text(encoding="ascii").strip() or None
    except (OSError, UnicodeDecodeError):
        return None


def replace_file(path: Path, data: bytes, mode: int) -> None:
    """Write `data` to `path` atomically with permission bits `mode`: a temporary file in
    the same directory, fsynced, renamed over `path`, then the directory fsynced."""
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            os.fchmod(stream.fileno(), mode)  # mkstemp creates 0600 whatever the umask
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except OSError as exc:
        Path(temporary).unlink(missing_ok=True)
        raise PullFailed(f"cannot write {path}: {exc.strerror}") from None
    _fsync_directory(path.parent)


def _fsync_directory(directory: Path) -> None:
    """Make the rename itself durable; some file systems cannot open a directory."""
    with contextlib.suppress(OSError):
        handle = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(handle)
        finally:
            os.close(handle)


def store_etag(directory: Path, etag: str | None, mode: int) -> None:
    path = directory / ETAG_FILE
    if etag:
        replace_file(path, etag.encode("ascii", "replace") + b"\n", mode)
    else:
        path.unlink(missing_ok=True)


def http_get(url: str, token: str, etag: str | None, timeout: float) -> Response:
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
        raise HttpStatus(f"{url} answered {exc.code} {exc.reason}", exc.code) from None
    except urllib.error.URLError as exc:
        raise PullFailed(f"cannot reach {url}: {exc.reason}") from None
    except (OSError, http.client.HTTPException) as exc:
        raise PullFailed(f"cannot reach {url}: {exc or type(exc).__name__}") from None
    if status != 200:
        raise PullFailed(f"{url} answered {status}, not 200 with a bundle")
    if len(body) > MAX_BUNDLE_BYTES:
        raise PullFailed(f"the served bundle is larger than {MAX_BUNDLE_BYTES} bytes")
    return Response(status, body, tag)
