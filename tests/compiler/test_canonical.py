"""The canonical JSON every hash is taken over is RFC 8785's, byte for byte, whichever
encoder writes it (the fast path for plain values, rfc8785 for the rest)."""

from __future__ import annotations

import enum

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import canonical_bytes


class State(enum.StrEnum):
    SUPPORTED = "supported"


class Rank(enum.IntEnum):
    FIRST = 1


scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=30,
)


@given(values)
def test_the_bytes_are_rfc8785s(value: object) -> None:
    assert canonical_bytes(value) == rfc8785.dumps(value)


@settings(max_examples=500)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), max_size=8))
def test_floats_are_written_the_ecmascript_way(value: list[float]) -> None:
    assert canonical_bytes(value) == rfc8785.dumps(value)


@pytest.mark.parametrize(
    "value",
    [
        # Keys beyond the Basic Multilingual Plane sort by UTF-16 code units.
        {"\U0001f600": 1, "\ue000": 2},
        {"a": [1.0, 0.1, 1e21, -0.0, 1e-7, 0.5, 1e16]},
        # Enums, as the compiler's plan ids hold them, are written as their values.
        {State.SUPPORTED: [State.SUPPORTED, Rank.FIRST, True, (1, "a")]},
        {"text": 'tab\t, quote", backslash\\, bell\x07, line separator\u2028'},
    ],
)
def test_values_the_c_encoder_would_write_otherwise(value: object) -> None:
    assert canonical_bytes(value) == rfc8785.dumps(value)


@pytest.mark.parametrize("value", [{"a": "\ud800"}, 2**53, {1: "a"}])
def test_what_rfc8785_refuses_is_still_refused(value: object) -> None:
    with pytest.raises(rfc8785.CanonicalizationError):
        canonical_bytes(value)
