"""Servers for the tests: any HTTP server in a daemon thread, a server of bundles at the
workbench's paths, and `evidence-compiler serve` in a subprocess."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from socketserver import BaseServer
from typing import Any


@contextlib.contextmanager
def served(httpd: BaseServer) -> Iterator[None]:
    """Serve `httpd` in a thread for the duration of the block, then shut it down."""
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


class BundleServer:
    """Answers each path from `routes` (body, ETag), honouring If-None-Match; 404 otherwise."""

    def __init__(self, latest: str) -> None:
        self.routes: dict[str, tuple[bytes, str | None]] = {}
        self.requests: list[tuple[str, dict[str, str]]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.requests.append((self.path, dict(self.headers.items())))
                if self.path not in server.routes:
                    return self._answer(404, b"{}", None)
                body, etag = server.routes[self.path]
                if etag and self.headers.get("If-None-Match") == etag:
                    return self._answer(304, b"", etag)
                return self._answer(200, body, etag)

            def _answer(self, status: int, body: bytes, etag: str | None) -> None:
                self.send_response(status)
                if etag:
                    self.send_header("ETag", etag)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.latest = latest
        self.url = self.base + latest

    def serve(self, body: bytes, etag: str | None = None) -> None:
        self.routes[self.latest] = (body, etag)

    def serve_version(self, version: int, body: bytes) -> None:
        """Serve `body` as version `version`, where the workbench serves it."""
        path = self.latest.removesuffix("/bundle") + f"/versions/{version}/bundle"
        self.routes[path] = (body, None)


class DecisionServer:
    """`evidence-compiler serve` in a subprocess on a free loopback port, and JSON calls to it."""

    def __init__(self, bundle_dir: Path, keys: Path, *extra: str) -> None:
        root = Path(__file__).resolve().parents[2]
        argv = [sys.executable, "-m", "compiler_tools", "serve", "--bundle-dir", str(bundle_dir),
                "--public-key", str(keys), "--port", "0", "--interval", "0.1", *extra]  # fmt: skip
        env = {**os.environ, "PYTHONPATH": str(root)}
        self.process = subprocess.Popen(
            argv, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line.startswith("serving decisions on "):
            self.stop()
            raise AssertionError(f"serve did not start: {line}{self.process.stderr.read()}")  # type: ignore[union-attr]
        self.url = line.split()[-1]

    def call(self, method: str, path: str, body: bytes | None = None) -> tuple[int, Any]:
        """The status and the body (JSON parsed, or the text)."""
        request = urllib.request.Request(self.url + path, data=body, method=method)
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:  # noqa: S310
                status, data = answer.status, answer.read()
        except urllib.error.HTTPError as error:
            status, data = error.code, error.read()
        try:
            return status, json.loads(data)
        except ValueError:
            return status, data.decode()

    def decide(self, document: dict[str, Any]) -> tuple[int, Any]:
        return self.call("POST", "/v1/decide", json.dumps(document).encode())

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()
