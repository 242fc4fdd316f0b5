"""A worker asked to stop (SIGTERM, SIGINT) while it executes a task.

django-tasks-db's `db_worker` answers the first SIGTERM by taking no further task but lets
the task in hand run to its end; a second signal exits at once. A long task would so keep a
stopping worker (a rolling restart, a scale-down) for as long as it runs. A task that can
hand its work back runs inside `handing_back_on_signals()`: the signal still reaches the
worker's own handler (so it takes no further task) and also sets `requested()`, which the
task checks between units of work to commit what it has, give the rest back to the queue and
return. See `runner.chunk_execute`.

Only the main thread can install a signal handler; a task run in another thread (the
immediate backend called from a test server's thread) runs without this, as before.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Any

SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGINT", "SIGQUIT") if hasattr(signal, name)
)

_requested = threading.Event()


class WorkerStopping(Exception):
    """Raised by a task's unit of work once its results are committed: the worker was asked
    to stop, and the rest of the task is to be handed back."""


def requested() -> bool:
    """Whether the worker was asked to stop during the task in hand."""
    return _requested.is_set()


def request() -> None:
    """Ask the task in hand to hand back its work (what the signal handler does)."""
    _requested.set()


@contextlib.contextmanager
def handing_back_on_signals() -> Iterator[None]:
    """For the duration of a task: SIGTERM, SIGINT and SIGQUIT set `requested()` and then go
    to the handler that was there (the worker's), which is put back afterwards."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {number: signal.getsignal(number) for number in SIGNALS}

    def handler(number: int, frame: FrameType | None) -> Any:
        _requested.set()
        chained = previous[number]
        if callable(chained):
            return chained(number, frame)
        if chained == signal.SIG_DFL:  # no worker handler: behave as the default would
            signal.signal(number, signal.SIG_DFL)
            signal.raise_signal(number)
        return None

    for number in SIGNALS:
        signal.signal(number, handler)
    try:
        yield
    finally:
        for number, chained in previous.items():
            signal.signal(number, chained)
        _requested.clear()
