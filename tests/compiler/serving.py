"""Running a test's HTTP server on a loopback port in a daemon thread, and a server of
bundles at fixed paths."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from socketserver import BaseServer


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
