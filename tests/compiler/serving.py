"""Running a test's HTTP server on a loopback port in a daemon thread."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
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
