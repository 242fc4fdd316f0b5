"""The cyclic collector paused while documents load, safely across threads: a threaded server
loading two documents at once must neither run one of them with the collector on nor leave
it off (or turn it on when the application had turned it off)."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest
from evidence_factories import candidate, document

from compiler import InvalidInput, load_input
from compiler.loading import collection_paused


@pytest.fixture
def collector_enabled() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if was:
        gc.enable()
    else:
        gc.disable()


def _paused_in_thread(entered: threading.Event, leave: threading.Event) -> threading.Thread:
    def hold() -> None:
        with collection_paused():
            entered.set()
            leave.wait(10)

    thread = threading.Thread(target=hold)
    thread.start()
    assert entered.wait(10)
    return thread


def test_the_collector_stays_paused_until_the_last_concurrent_load_ends(collector_enabled):
    first_in, first_out = threading.Event(), threading.Event()
    second_in, second_out = threading.Event(), threading.Event()
    first = _paused_in_thread(first_in, first_out)
    second = _paused_in_thread(second_in, second_out)
    assert not gc.isenabled()

    first_out.set()  # the first load ends while the second is still running
    first.join(10)
    assert not gc.isenabled()

    second_out.set()
    second.join(10)
    assert gc.isenabled()


def test_a_load_in_another_thread_keeps_the_collector_off_when_it_was_off(collector_enabled):
    gc.disable()
    inner_in, inner_out = threading.Event(), threading.Event()
    with collection_paused():
        thread = _paused_in_thread(inner_in, inner_out)
        inner_out.set()
        thread.join(10)
    assert not gc.isenabled()

    loaded = threading.Thread(target=lambda: load_input(document(candidate("a"))))
    loaded.start()
    loaded.join(10)
    assert not gc.isenabled()


def test_a_failed_load_ends_its_pause(collector_enabled):
    with pytest.raises(InvalidInput) as raised:
        load_input(document(candidate("a", tokens="12")))
    assert [tuple(e["loc"]) for e in raised.value.errors] == [("candidates", 0, "tokens")]
    assert gc.isenabled()
