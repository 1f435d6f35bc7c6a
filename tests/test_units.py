"""Sizes and numbers as users type and read them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from diskq.errors import InvalidInput
from diskq.units import MAX_SIZE, human_bytes, parse_int_list, parse_size


def test_parse_size_units():
    assert (parse_size("1G"), parse_size("1GB"), parse_size("4k"), parse_size(" 512 MiB ")) == (
        1024**3,
        10**9,
        4096,
        512 * 1024**2,
    )
    assert parse_size(4096) == 4096


@pytest.mark.parametrize("text", ["0", "-1G", "1X", "", "9" * 400, "1" + "0" * 30 + "T", 2**63, 0])
def test_parse_size_rejects_what_is_not_a_usable_size(text):
    with pytest.raises(InvalidInput):
        parse_size(text)


@given(st.text(max_size=40) | st.integers())
def test_parse_size_never_crashes(text):
    try:
        value = parse_size(text)
    except InvalidInput:
        return
    assert 0 < value <= MAX_SIZE


def test_human_bytes():
    assert human_bytes(None) == "-"
    assert human_bytes(1023) == "1023 B"
    assert human_bytes(1024**3) == "1.0 GiB"
    assert human_bytes(2473166 * 10**6, si=True) == "2.5 TB"
    assert human_bytes(float("nan")) == "-"


@given(st.integers() | st.floats())
def test_human_bytes_never_crashes(n):
    assert isinstance(human_bytes(n), str) and isinstance(human_bytes(n, si=True), str)


def test_parse_int_list():
    assert parse_int_list("8, 1,2,2") == [1, 2, 8]
    for bad in ("", "0", "a", "1,-2", "9" * 5000):
        with pytest.raises(InvalidInput):
            parse_int_list(bad)
