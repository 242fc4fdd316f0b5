"""The engine leaves Python's cyclic garbage collector alone: it is process-wide, and a threaded
web server loading two documents at once must not find it switched off (or on) by either."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
from evidence_factories import candidate, document

from compiler import InvalidInput, compile_input, load_input
from compiler._validate_input import load_input_consuming


@pytest.fixture
def collector_switches(monkeypatch) -> Iterator[list[str]]:
    """Every `gc.enable`/`gc.disable`/`gc.freeze` call made while the test runs."""
    calls: list[str] = []
    for name in ("enable", "disable", "freeze"):
        monkeypatch.setattr(gc, name, lambda name=name: calls.append(name))
    yield calls


def test_loading_and_compiling_never_switch_the_collector(collector_switches, monkeypatch):
    monkeypatch.setattr("compiler._validate_input.CHUNK", 2)
    pool = [candidate(f"c{i}") for i in range(5)]
    load_input(document(*pool))
    load_input_consuming(document(*pool), lambda: document(*pool))
    compile_input(load_input(document(*pool)))
    with pytest.raises(InvalidInput):
        load_input(document(candidate("a", tokens="12")))
    assert collector_switches == []


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_as_the_application_left_it(enabled):
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        load_input(document(candidate("a")))
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()
